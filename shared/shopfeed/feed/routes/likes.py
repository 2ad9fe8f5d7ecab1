"""Likes (FEED-005): one per user per post, by its natural key."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from shopfeed.feed.engagement import services as engagement
from shopfeed.feed.models import Like
from shopfeed.feed.routes import EngagementStore, Store
from shopfeed.feed.routes.params import PostPath
from shopfeed.feed.schemas import LikePage
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, json_response
from shopfeed.platform.observability import metrics
from shopfeed.platform.parameters import Cursor
from shopfeed.platform.problems import problem_responses

router = Router()


@router.put(
    "/posts/<post_id>/likes/me",
    summary="Like a post: 201 the first time, 200 after (one like per user per post)",
    # 200 for a repeat, with the same body as the 201 (the schema comes from the return type).
    responses={
        200: {"description": "Already liked"},
        **problem_responses(errors.NotFound, errors.Contention, ok=201),
    },
    tags=["likes"],
)
def like(post_id: PostPath, caller: CurrentCaller, store: Store, likes: EngagementStore) -> Response[Like]:
    made, created = engagement.like_post(store, likes, caller, post_id)
    if created:
        metrics.add_metric(name="PostLiked", unit="Count", value=1)
    return json_response(made, 201 if created else 200)


@router.delete(
    "/posts/<post_id>/likes/me",
    summary="Unlike a post (no-op if not liked)",
    status_code=204,
    responses=problem_responses(ok=204),
    tags=["likes"],
)
def unlike(post_id: PostPath, caller: CurrentCaller, likes: EngagementStore) -> Response[None]:
    engagement.unlike_post(likes, caller, post_id)
    return Response(status_code=204)


@router.get(
    "/posts/<post_id>/likes",
    summary="A post's likes, newest first (FEED-005): one Query on LikesByPost",
    responses=problem_responses(errors.NotFound, errors.InvalidCursor),
    tags=["likes"],
)
def list_likes(
    post_id: PostPath,
    caller: CurrentCaller,
    store: Store,
    likes: EngagementStore,
    limit: Annotated[int, Query(ge=1, le=200)] = 200,
    cursor: Cursor = None,
) -> LikePage:
    page = engagement.list_likes(store, likes, post_id, limit, cursor)
    return LikePage(items=page.items, next_cursor=page.next_cursor)
