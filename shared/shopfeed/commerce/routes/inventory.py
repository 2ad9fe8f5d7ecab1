from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shopfeed.commerce import bootstrap
from shopfeed.commerce.inventory import services, snapshots
from shopfeed.commerce.schemas import AdjustInventory, InventoryView, SnapshotPage
from shopfeed.commerce.types import ProductId, Warehouse
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, json_response
from shopfeed.platform.observability import metrics
from shopfeed.platform.parameters import Cursor, IfMatch
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.types import Day
from shopfeed.platform.versioning import expected_version

router = Router()
Snapshots = Annotated[snapshots.SnapshotReader, Depends(bootstrap.snapshots)]
StockBuckets = Annotated[services.Stock, Depends(bootstrap.stock)]
ProductPath = Annotated[ProductId, Path()]


@router.get(
    "/inventory/snapshots",
    summary="A day's inventory snapshot (ops): every product's stock level, by product id",
    responses=problem_responses(errors.Forbidden, errors.InvalidCursor),
    tags=["inventory"],
)
def list_snapshot(
    day: Annotated[Day, Query(alias="date", description="The UTC day (YYYY-MM-DD); kept 90 days")],
    caller: CurrentCaller,
    reader: Snapshots,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    cursor: Cursor = None,
) -> SnapshotPage:
    page = snapshots.read_snapshot(reader, caller, day.isoformat(), limit, cursor)
    return SnapshotPage(date=day.isoformat(), items=page.items, next_cursor=page.next_cursor)


@router.get(
    "/products/<product_id>/inventory",
    summary="A product's stock by warehouse and bucket (ops), strongly consistent; ETag is the layout's version",
    responses=problem_responses(errors.Forbidden, errors.NotFound),
    tags=["inventory"],
)
def get_inventory(product_id: ProductPath, caller: CurrentCaller, stock: StockBuckets) -> Response[InventoryView]:
    layout, levels = services.read_inventory(stock, caller, product_id)
    return json_response(InventoryView.of(layout, levels), version=layout.version)


@router.put(
    "/products/<product_id>/inventory/<warehouse>",
    summary="Restock a warehouse and (or) set its bucket count (admin, If-Match: the inventory's ETag)",
    responses=problem_responses(
        errors.Forbidden, errors.NotFound, errors.PreconditionRequired, errors.StaleVersion, errors.Contention
    ),
    tags=["inventory"],
)
def adjust_inventory(
    product_id: ProductPath,
    warehouse: Annotated[Warehouse, Path()],
    body: AdjustInventory,
    caller: CurrentCaller,
    stock: StockBuckets,
    if_match: IfMatch = None,
) -> Response[InventoryView]:
    version = expected_version(if_match)
    layout, levels = services.adjust_inventory(
        stock, caller, product_id, warehouse, version, body.restock, body.buckets
    )
    metrics.add_metric(name="InventoryAdjusted", unit="Count", value=1)
    return json_response(InventoryView.of(layout, levels), version=layout.version)
