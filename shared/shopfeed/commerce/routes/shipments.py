"""Shipments over HTTP: ops create and move parcels of paid orders; an order's shipments (ECOM-008) and
the ops dashboard by status, carrier and month (ECOM-010)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shopfeed.commerce import bootstrap
from shopfeed.commerce.errors import OrderNotShippable
from shopfeed.commerce.models import ShipmentStatus
from shopfeed.commerce.schemas import CreateShipment, ShipmentPage, ShipmentView, UpdateShipment
from shopfeed.commerce.shipments import services as shipments
from shopfeed.commerce.types import Carrier
from shopfeed.platform import errors
from shopfeed.platform.clock import utc_now
from shopfeed.platform.http import CurrentCaller, json_response
from shopfeed.platform.idempotency import REPLAYED_HEADER, IdempotentRequest
from shopfeed.platform.observability import metrics
from shopfeed.platform.parameters import Cursor, IdempotencyKey, IfMatch
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.types import EntityId, Month
from shopfeed.platform.versioning import expected_version

router = Router()
OrderPath = Annotated[EntityId, Path(description="A ULID")]
ShipmentPath = Annotated[EntityId, Path(description="A ULID")]
ShipmentStore = Annotated[shipments.Shipments, Depends(bootstrap.shipments)]
ShipmentListStore = Annotated[shipments.ShipmentLists, Depends(bootstrap.shipment_lists)]


@router.post(
    "/orders/<order_id>/shipments",
    summary="Create a shipment of a paid order (ops, Idempotency-Key required)",
    status_code=201,
    responses=problem_responses(
        errors.Forbidden,
        errors.NotFound,
        errors.MissingIdempotencyKey,
        errors.IdempotencyKeyReused,
        OrderNotShippable,
        errors.Contention,
        ok=201,
    ),
    tags=["shipments"],
)
def create_shipment(
    order_id: OrderPath,
    body: CreateShipment,
    caller: CurrentCaller,
    store: ShipmentStore,
    idempotency_key: IdempotencyKey = None,
) -> Response[ShipmentView]:
    request = IdempotentRequest.of(caller.user_id, idempotency_key, f"ship:{order_id}", body.model_dump(mode="json"))
    created = shipments.create_shipment(store, caller, request, order_id, body.carrier, body.tracking_number)
    shipment = created.value
    if not created.replayed:
        metrics.add_metric(name="ShipmentCreated", unit="Count", value=1)
    headers = {"Location": f"/orders/{order_id}/shipments/{shipment.shipment_id}"}
    if created.replayed:
        headers[REPLAYED_HEADER] = "true"
    return json_response(ShipmentView.fields_of(shipment), 201, shipment.version, headers)


@router.get(
    "/orders/<order_id>/shipments/<shipment_id>",
    summary="Get a shipment (its order's owner or ops); the ETag is what PATCH needs",
    responses=problem_responses(errors.NotFound),
    tags=["shipments"],
)
def get_shipment(
    order_id: OrderPath, shipment_id: ShipmentPath, caller: CurrentCaller, store: ShipmentStore
) -> Response[ShipmentView]:
    shipment = shipments.read_shipment(store, caller, order_id, shipment_id)
    return json_response(ShipmentView.fields_of(shipment), version=shipment.version)


@router.patch(
    "/orders/<order_id>/shipments/<shipment_id>",
    summary="Move a shipment along Created → Shipped → Delivered / Returned (ops, If-Match); the order follows",
    responses=problem_responses(
        errors.Forbidden,
        errors.NotFound,
        errors.PreconditionRequired,
        errors.StaleVersion,
        errors.InvalidTransition,
        OrderNotShippable,
        errors.Contention,
    ),
    tags=["shipments"],
)
def update_shipment(
    order_id: OrderPath,
    shipment_id: ShipmentPath,
    body: UpdateShipment,
    caller: CurrentCaller,
    store: ShipmentStore,
    if_match: IfMatch = None,
) -> Response[ShipmentView]:
    version = expected_version(if_match)
    shipment = shipments.update_shipment(
        store, caller, order_id, shipment_id, version, body.status, body.tracking_number
    )
    metrics.add_metric(name=f"Shipment{shipment.status.value}", unit="Count", value=1)
    return json_response(ShipmentView.fields_of(shipment), version=shipment.version)


@router.get(
    "/orders/<order_id>/shipments",
    summary="List an order's shipments, newest update first (ECOM-008)",
    responses=problem_responses(errors.NotFound, errors.InvalidCursor),
    tags=["shipments"],
)
def list_order_shipments(
    order_id: OrderPath,
    caller: CurrentCaller,
    store: ShipmentStore,
    lists: ShipmentListStore,
    limit: Annotated[int, Query(ge=1, le=25)] = 5,
    cursor: Cursor = None,
) -> ShipmentPage:
    page = shipments.list_order_shipments(store, lists, caller, order_id, limit, cursor)
    return ShipmentPage(items=[ShipmentView.fields_of(s) for s in page.items], next_cursor=page.next_cursor)


@router.get(
    "/shipments",
    summary="List shipments by status and carrier within a month, newest update first (ECOM-010, ops)",
    responses=problem_responses(errors.Forbidden, errors.InvalidCursor),
    tags=["shipments"],
)
def list_shipments(
    status: Annotated[ShipmentStatus, Query()],
    carrier: Annotated[Carrier, Query()],
    caller: CurrentCaller,
    lists: ShipmentListStore,
    month: Annotated[Month | None, Query(description="YYYY-MM of the last update; default this month")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 100,
    cursor: Cursor = None,
) -> ShipmentPage:
    month = month or utc_now().strftime("%Y-%m")
    page = shipments.list_shipments(lists, caller, status, carrier, month, limit, cursor)
    return ShipmentPage(items=[ShipmentView.fields_of(s) for s in page.items], next_cursor=page.next_cursor)
