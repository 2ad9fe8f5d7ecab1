"""Comments (FEED-006): created with an Idempotency-Key, listed oldest first; a user's, newest first."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shopfeed.feed import queries
from shopfeed.feed.engagement import services as engagement
from shopfeed.feed.models import Comment
from shopfeed.feed.routes import EngagementStore, Reader, Store
from shopfeed.feed.routes.params import PostPath, UserPath
from shopfeed.feed.schemas import CommentPage, CreateComment
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, created_response
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.observability import metrics
from shopfeed.platform.parameters import Cursor, IdempotencyKey
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.types import EntityId

router = Router()


@router.post(
    "/posts/<post_id>/comments",
    summary="Comment on a post (Idempotency-Key required)",
    status_code=201,
    responses=problem_responses(
        errors.MissingIdempotencyKey, errors.IdempotencyKeyReused, errors.NotFound, errors.Contention, ok=201
    ),
    tags=["comments"],
)
def create_comment(
    post_id: PostPath,
    body: CreateComment,
    caller: CurrentCaller,
    store: Store,
    comments: EngagementStore,
    idempotency_key: IdempotencyKey = None,
) -> Response[Comment]:
    request = IdempotentRequest.of(
        caller.user_id, idempotency_key, "create-comment", {"post_id": post_id, **body.model_dump(mode="json")}
    )
    created = engagement.add_comment(store, comments, caller, request, post_id, body.text)
    if not created.replayed:
        metrics.add_metric(name="CommentCreated", unit="Count", value=1)
    location = f"/posts/{post_id}/comments/{created.value.comment_id}"
    return created_response(created.value, created.replayed, location=location)


@router.get(
    "/posts/<post_id>/comments",
    summary="A post's comments, oldest first (FEED-006): one Query on the post's partition",
    responses=problem_responses(errors.NotFound, errors.InvalidCursor),
    tags=["comments"],
)
def list_comments(
    post_id: PostPath,
    caller: CurrentCaller,
    store: Store,
    comments: EngagementStore,
    limit: Annotated[int, Query(ge=1, le=200)] = 200,
    cursor: Cursor = None,
) -> CommentPage:
    page = engagement.list_comments(store, comments, post_id, limit, cursor)
    return CommentPage(items=page.items, next_cursor=page.next_cursor)


@router.delete(
    "/posts/<post_id>/comments/<comment_id>",
    summary="Delete a comment: by its author or the post's author",
    status_code=204,
    responses=problem_responses(errors.NotFound, errors.Forbidden, ok=204),
    tags=["comments"],
)
def delete_comment(
    post_id: PostPath,
    comment_id: Annotated[EntityId, Path(description="A ULID")],
    caller: CurrentCaller,
    comments: EngagementStore,
) -> Response[None]:
    engagement.delete_comment(comments, caller, post_id, comment_id)
    return Response(status_code=204)


@router.get(
    "/users/<user_id>/comments",
    summary="A user's comments, newest first: one Query on CommentsByUser (comments of a deleted post are left out)",
    responses=problem_responses(errors.InvalidCursor),
    tags=["comments"],
)
def list_user_comments(
    user_id: UserPath,
    caller: CurrentCaller,
    reader: Reader,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Cursor = None,
) -> CommentPage:
    page = queries.comments_of_user(reader, caller.user_id if user_id == "me" else user_id, limit, cursor)
    return CommentPage(items=page.items, next_cursor=page.next_cursor)
