from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from shopfeed.feed import services
from shopfeed.feed.routes import Store
from shopfeed.feed.routes.media import post_view
from shopfeed.feed.schemas import FeedPage
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller
from shopfeed.platform.parameters import Cursor
from shopfeed.platform.problems import problem_responses

router = Router()


@router.get(
    "/feed",
    summary="My home feed, newest first (FEED-003): my feed partition merged with the celebrities I follow",
    responses=problem_responses(errors.InvalidCursor),
    tags=["feed"],
)
def home_feed(
    caller: CurrentCaller,
    store: Store,
    limit: Annotated[int, Query(ge=1, le=50)] = 50,
    cursor: Cursor = None,
) -> FeedPage:
    page = services.read_home_feed(store, caller, limit, cursor)
    return FeedPage(items=[post_view(post) for post in page.items], next_cursor=page.next_cursor)
