from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from shopfeed.feed import services
from shopfeed.feed.models import Follow
from shopfeed.feed.routes import Store
from shopfeed.feed.routes.params import UserPath
from shopfeed.feed.schemas import FollowPage
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, json_response
from shopfeed.platform.observability import metrics
from shopfeed.platform.parameters import Cursor
from shopfeed.platform.problems import problem_responses

router = Router()


@router.put(
    "/users/<user_id>/followers/me",
    summary="Follow a user: 201 the first time, 200 after (one edge per pair); their recent posts then join my feed",
    # 200 for a repeat, with the same body as the 201 (the schema comes from the return type).
    responses={
        200: {"description": "Already followed"},
        **problem_responses(errors.NotFound, errors.InvalidRequest, ok=201),
    },
    tags=["follows"],
)
def follow(user_id: UserPath, caller: CurrentCaller, store: Store) -> Response[Follow]:
    edge, created = services.follow_user(store, caller, user_id)
    if created:
        metrics.add_metric(name="UserFollowed", unit="Count", value=1)
    return json_response(edge, 201 if created else 200)


@router.delete(
    "/users/<user_id>/followers/me",
    summary="Unfollow a user (no-op if not followed); their posts then leave my feed (asynchronously)",
    status_code=204,
    responses=problem_responses(errors.NotFound, ok=204),
    tags=["follows"],
)
def unfollow(user_id: UserPath, caller: CurrentCaller, store: Store) -> Response[None]:
    services.unfollow_user(store, caller, user_id)
    return Response(status_code=204)


@router.get(
    "/users/<user_id>/followers",
    summary="A user's followers, newest first (FEED-008)",
    responses=problem_responses(errors.InvalidCursor),
    tags=["follows"],
)
def list_followers(
    user_id: UserPath,
    caller: CurrentCaller,
    store: Store,
    limit: Annotated[int, Query(ge=1, le=500)] = 500,
    cursor: Cursor = None,
) -> FollowPage:
    page = services.list_followers(store, caller.user_id if user_id == "me" else user_id, limit, cursor)
    return FollowPage(items=page.items, next_cursor=page.next_cursor)


@router.get(
    "/users/<user_id>/following",
    summary="Who a user follows, newest first",
    responses=problem_responses(errors.InvalidCursor),
    tags=["follows"],
)
def list_following(
    user_id: UserPath,
    caller: CurrentCaller,
    store: Store,
    limit: Annotated[int, Query(ge=1, le=500)] = 500,
    cursor: Cursor = None,
) -> FollowPage:
    page = services.list_following(store, caller.user_id if user_id == "me" else user_id, limit, cursor)
    return FollowPage(items=page.items, next_cursor=page.next_cursor)
