"""My shopping cart (seed 001, AP 8) and its checkout. Every route is the caller's own (``/users/me``):
nobody names another user's cart, so nobody reads or changes one."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path

from shopfeed.commerce import bootstrap
from shopfeed.commerce.cart import services
from shopfeed.commerce.cart.schemas import CartView, PutCartLine
from shopfeed.commerce.errors import CartFull, EmptyCart, InsufficientStock, PriceChanged, UnknownProducts
from shopfeed.commerce.models import Cart
from shopfeed.commerce.schemas import OrderView
from shopfeed.commerce.types import ProductId
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, created_response, json_response
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.parameters import IdempotencyKey, IfMatch
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.versioning import optional_version

router = Router()
CartStore = Annotated[services.Carts, Depends(bootstrap.carts)]
# If-Match is optional on the cart (docs/data-model.md, decision 109): a shopper's two tabs each set a
# line's quantity and the last one wins; a client that wants "exactly the cart I read" sends it.
ProductPath = Annotated[ProductId, Path()]


def _cart_response(cart: Cart) -> Response[CartView]:
    return json_response(CartView.of(cart), version=cart.version)


@router.get(
    "/users/me/cart",
    summary="My cart (seed 001 AP 8): one strongly consistent Query in my partition",
    responses=problem_responses(),
    tags=["cart"],
)
def get_cart(caller: CurrentCaller, carts: CartStore) -> Response[CartView]:
    return _cart_response(services.read_cart(carts, caller))


@router.put(
    "/users/me/cart/items/<product_id>",
    summary="Put a product in my cart with a quantity, at its price now (If-Match optional: the cart's ETag)",
    responses=problem_responses(
        errors.NotFound, CartFull, errors.InvalidRequest, errors.StaleVersion, errors.Contention
    ),
    tags=["cart"],
)
def put_cart_line(
    product_id: ProductPath, body: PutCartLine, caller: CurrentCaller, carts: CartStore, if_match: IfMatch = None
) -> Response[CartView]:
    cart = services.put_line(carts, caller, product_id, body.quantity, optional_version(if_match))
    return _cart_response(cart)


@router.delete(
    "/users/me/cart/items/<product_id>",
    summary="Take a product out of my cart (no-op if it is not there; If-Match optional)",
    responses=problem_responses(errors.StaleVersion, errors.Contention),
    tags=["cart"],
)
def delete_cart_line(
    product_id: ProductPath, caller: CurrentCaller, carts: CartStore, if_match: IfMatch = None
) -> Response[CartView]:
    return _cart_response(services.remove_line(carts, caller, product_id, optional_version(if_match)))


@router.post(
    "/users/me/cart/checkout",
    summary="Place an order from my cart and empty it: the order placement's one transaction",
    status_code=201,
    responses=problem_responses(
        errors.MissingIdempotencyKey,
        errors.IdempotencyKeyReused,
        EmptyCart,
        UnknownProducts,
        InsufficientStock,
        PriceChanged,
        errors.InvalidRequest,
        errors.StaleVersion,
        errors.Contention,
        ok=201,
    ),
    tags=["cart"],
)
def check_out(
    caller: CurrentCaller,
    carts: CartStore,
    idempotency_key: IdempotencyKey = None,
    if_match: IfMatch = None,
) -> Response[OrderView]:
    request = IdempotentRequest.of(caller.user_id, idempotency_key, "check-out-cart", {})
    created = services.check_out(carts, caller, request, optional_version(if_match))
    order = created.value
    if not created.replayed:
        logger.info("cart checked out", order_id=order.order_id, lines=order.line_count)
        metrics.add_metric(name="OrderPlaced", unit="Count", value=1)
        metrics.add_metric(name="CartCheckedOut", unit="Count", value=1)
    return created_response(OrderView.of(order), created.replayed, location=f"/orders/{order.order_id}")
