from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Query

from shopfeed.commerce import bootstrap
from shopfeed.commerce.inventory import snapshots
from shopfeed.commerce.schemas import SnapshotPage
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller
from shopfeed.platform.parameters import Cursor
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.types import Day

router = Router()
Snapshots = Annotated[snapshots.SnapshotReader, Depends(bootstrap.snapshots)]


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
