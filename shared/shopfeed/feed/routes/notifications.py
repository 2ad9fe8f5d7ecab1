"""Notifications (FEED-009) and the monthly leaderboard (FEED-010)."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shopfeed.feed.engagement import services as engagement
from shopfeed.feed.models import Notification
from shopfeed.feed.routes import EngagementStore
from shopfeed.feed.schemas import Leaderboard, MarkedRead, NotificationPage
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, json_response
from shopfeed.platform.parameters import Cursor
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.types import EntityId

router = Router()


@router.get(
    "/notifications",
    summary="My notifications, newest first (FEED-009): unread=true reads the sparse unread index",
    responses=problem_responses(errors.InvalidCursor),
    tags=["notifications"],
)
def list_notifications(
    caller: CurrentCaller,
    notifications: EngagementStore,
    unread: Annotated[bool, Query(description="Only unread ones")] = False,
    limit: Annotated[int, Query(ge=1, le=50)] = 50,
    cursor: Cursor = None,
) -> NotificationPage:
    page = engagement.list_notifications(notifications, caller, unread, limit, cursor)
    return NotificationPage(items=page.items, next_cursor=page.next_cursor)


@router.post(
    "/notifications/read",
    summary="Mark all my notifications read",
    responses=problem_responses(errors.Contention),
    tags=["notifications"],
)
def mark_all_read(caller: CurrentCaller, notifications: EngagementStore) -> MarkedRead:
    return MarkedRead(marked=engagement.mark_all_read(notifications, caller))


@router.post(
    "/notifications/<notification_id>/read",
    summary="Mark a notification read: it leaves the unread index and expires 30 days later",
    responses=problem_responses(errors.NotFound),
    tags=["notifications"],
)
def mark_read(
    notification_id: Annotated[EntityId, Path(description="A ULID")],
    caller: CurrentCaller,
    notifications: EngagementStore,
) -> Response[Notification]:
    return json_response(engagement.mark_read(notifications, caller, notification_id))


@router.get(
    "/leaderboards/authors",
    summary="Top 100 authors of a month by followers gained (FEED-010, ops): one Query per write shard",
    responses=problem_responses(errors.Forbidden),
    tags=["leaderboard"],
)
def leaderboard(
    caller: CurrentCaller,
    notifications: EngagementStore,
    month: Annotated[str, Query(pattern=r"^\d{4}-(0[1-9]|1[0-2])$", description="YYYY-MM (UTC)")],
) -> Leaderboard:
    return Leaderboard(month=month, items=engagement.top_authors(notifications, caller, month))
