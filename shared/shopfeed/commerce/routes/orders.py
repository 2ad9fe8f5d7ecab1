from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shopfeed.commerce.errors import InsufficientStock, PaymentInProgress, PriceChanged, UnknownProducts
from shopfeed.commerce.models import OrderStatus
from shopfeed.commerce.orders import services
from shopfeed.commerce.routes import Store
from shopfeed.commerce.schemas import (
    OrderHistoryPage,
    OrderLinePage,
    OrderLineView,
    OrderMoveView,
    OrderPage,
    OrderView,
    PlaceOrder,
)
from shopfeed.platform import errors
from shopfeed.platform.clock import utc_now
from shopfeed.platform.http import CurrentCaller, created_response, json_response
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.parameters import Cursor, IdempotencyKey
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.types import EntityId, Month

router = Router()
OrderPath = Annotated[EntityId, Path(description="A ULID")]


@router.post(
    "/orders",
    summary="Place an order (ECOM-009): stock is decremented only if every line is available",
    status_code=201,
    responses=problem_responses(
        errors.MissingIdempotencyKey,
        errors.IdempotencyKeyReused,
        UnknownProducts,
        InsufficientStock,
        PriceChanged,
        errors.InvalidRequest,
        errors.Contention,
        ok=201,
    ),
    tags=["orders"],
)
def place_order(
    body: PlaceOrder, caller: CurrentCaller, store: Store, idempotency_key: IdempotencyKey = None
) -> Response[OrderView]:
    request = IdempotentRequest.of(caller.user_id, idempotency_key, "place-order", body.model_dump(mode="json"))
    created = services.place_order(
        store, caller, request, [(line.product_id, line.quantity, line.unit_price) for line in body.lines]
    )
    order = created.value
    if not created.replayed:
        logger.info("order placed", order_id=order.order_id, lines=order.line_count)
        metrics.add_metric(name="OrderPlaced", unit="Count", value=1)
    return created_response(OrderView.of(order), created.replayed, location=f"/orders/{order.order_id}")


@router.get(
    "/orders/<order_id>",
    summary="Get an order with its lines (ECOM-003): one strongly consistent Query",
    responses=problem_responses(errors.NotFound),
    tags=["orders"],
)
def get_order(order_id: OrderPath, caller: CurrentCaller, store: Store) -> Response[OrderView]:
    order = services.read_order(store, caller, order_id)
    return json_response(OrderView.of(order), version=order.version)


@router.get(
    "/orders/<order_id>/lines",
    summary="List an order's lines by line number (ECOM-004)",
    responses=problem_responses(errors.NotFound, errors.InvalidCursor),
    tags=["orders"],
)
def list_lines(
    order_id: OrderPath,
    caller: CurrentCaller,
    store: Store,
    limit: Annotated[int, Query(ge=1, le=200)] = 200,
    cursor: Cursor = None,
) -> OrderLinePage:
    page = services.list_order_lines(store, caller, order_id, limit, cursor)
    return OrderLinePage(items=[OrderLineView.of(line) for line in page.items], next_cursor=page.next_cursor)


@router.get(
    "/orders/<order_id>/history",
    summary="An order's status history, oldest move first (HISTORY, owner or ops): one Query of its partition",
    responses=problem_responses(errors.NotFound, errors.InvalidCursor),
    tags=["orders"],
)
def list_history(
    order_id: OrderPath,
    caller: CurrentCaller,
    store: Store,
    limit: Annotated[int, Query(ge=1, le=200)] = 100,
    cursor: Cursor = None,
) -> OrderHistoryPage:
    page = services.list_order_history(store, caller, order_id, limit, cursor)
    return OrderHistoryPage(items=[OrderMoveView.fields_of(move) for move in page.items], next_cursor=page.next_cursor)


@router.get(
    "/users/me/orders",
    summary="List my orders, newest first (ECOM-002)",
    responses=problem_responses(errors.InvalidCursor),
    tags=["orders"],
)
def list_my_orders(
    caller: CurrentCaller,
    store: Store,
    limit: Annotated[int, Query(ge=1, le=100)] = 25,
    cursor: Cursor = None,
) -> OrderPage:
    page = services.list_my_orders(store, caller, limit, cursor)
    return OrderPage(items=page.items, next_cursor=page.next_cursor)


@router.get(
    "/orders",
    summary="List orders by status within a month, newest first (ECOM-005, ops): one Query per write shard",
    responses=problem_responses(errors.Forbidden, errors.InvalidCursor),
    tags=["orders"],
)
def list_orders_by_status(
    status: Annotated[OrderStatus, Query()],
    caller: CurrentCaller,
    store: Store,
    month: Annotated[Month | None, Query(description="YYYY-MM of placement; default this month")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 200,
    cursor: Cursor = None,
) -> OrderPage:
    page = services.list_orders_by_status(store, caller, status, month or utc_now().strftime("%Y-%m"), limit, cursor)
    return OrderPage(items=page.items, next_cursor=page.next_cursor)


@router.post(
    "/orders/<order_id>/cancel",
    summary="Cancel an order (owner or ops) and restock its lines; repeating it changes nothing",
    responses=problem_responses(
        errors.NotFound, errors.InvalidTransition, PaymentInProgress, errors.StaleVersion, errors.Contention
    ),
    tags=["orders"],
)
def cancel_order(order_id: OrderPath, caller: CurrentCaller, store: Store) -> Response[OrderView]:
    order, cancelled_now = services.cancel_order(store, caller, order_id)
    if cancelled_now:
        metrics.add_metric(name="OrderCancelled", unit="Count", value=1)
    return json_response(OrderView.of(order), version=order.version)
