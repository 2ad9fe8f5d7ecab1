from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shopfeed.commerce.catalog import services
from shopfeed.commerce.routes import Store
from shopfeed.commerce.schemas import (
    Category,
    CreateProduct,
    ProductPage,
    ProductView,
    Restock,
    RestockView,
    UpdateProduct,
)
from shopfeed.commerce.types import ProductId
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, created_response, json_response
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.observability import metrics
from shopfeed.platform.parameters import Cursor, IdempotencyKey, IfMatch
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.versioning import expected_version

router = Router()
ProductPath = Annotated[ProductId, Path()]


@router.post(
    "/products",
    summary="Create a product (admin); the product id is the catalog's own (e.g. P-RED-TSHIRT)",
    status_code=201,
    responses=problem_responses(errors.Forbidden, errors.AlreadyExists, ok=201),
    tags=["products"],
)
def create_product(body: CreateProduct, caller: CurrentCaller, store: Store) -> Response[ProductView]:
    product = services.create_product(store, caller, body.model_dump())
    return json_response(ProductView.of(product), 201, product.version, {"Location": f"/products/{product.product_id}"})


@router.get(
    "/products/<product_id>",
    summary="Get a product with its price and stock",
    responses=problem_responses(errors.NotFound),
    tags=["products"],
)
def get_product(product_id: ProductPath, caller: CurrentCaller, store: Store) -> Response[ProductView]:
    product = services.read_product(store, product_id)
    return json_response(ProductView.of(product), version=product.version)


@router.patch(
    "/products/<product_id>",
    summary="Update a product (admin, If-Match required); stock changes through /stock",
    responses=problem_responses(errors.Forbidden, errors.NotFound, errors.PreconditionRequired, errors.StaleVersion),
    tags=["products"],
)
def update_product(
    product_id: ProductPath,
    body: UpdateProduct,
    caller: CurrentCaller,
    store: Store,
    if_match: IfMatch = None,
) -> Response[ProductView]:
    version = expected_version(if_match)
    changes: dict[str, Any] = body.model_dump(exclude_none=True)
    product = services.update_product(store, caller, product_id, version, changes)
    return json_response(ProductView.of(product), version=product.version)


@router.get(
    "/products",
    summary="List the products of a category, by product id",
    responses=problem_responses(errors.InvalidCursor),
    tags=["products"],
)
def list_products(
    category: Annotated[Category, Query()],
    caller: CurrentCaller,
    store: Store,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Cursor = None,
) -> ProductPage:
    page = services.list_category(store, category, limit, cursor)
    return ProductPage(items=page.items, next_cursor=page.next_cursor)


@router.post(
    "/products/<product_id>/stock",
    summary="Restock a product (admin, Idempotency-Key required)",
    status_code=201,
    responses=problem_responses(
        errors.Forbidden, errors.NotFound, errors.MissingIdempotencyKey, errors.IdempotencyKeyReused, ok=201
    ),
    tags=["products"],
)
def restock(
    product_id: ProductPath,
    body: Restock,
    caller: CurrentCaller,
    store: Store,
    idempotency_key: IdempotencyKey = None,
) -> Response[RestockView]:
    request = IdempotentRequest.of(
        caller.user_id, idempotency_key, f"restock:{product_id}", body.model_dump(mode="json")
    )
    created = services.restock_product(store, caller, product_id, body.quantity, request)
    if not created.replayed:
        metrics.add_metric(name="ProductRestocked", unit="Count", value=1)
    return created_response(RestockView.of(created.value), created.replayed)
