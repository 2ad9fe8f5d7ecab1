from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shopfeed.feed import bootstrap, services
from shopfeed.feed.media.services import MediaUnusable
from shopfeed.feed.routes import CelebrityThreshold, Store
from shopfeed.feed.routes.media import post_view
from shopfeed.feed.routes.params import PostPath, UserPath
from shopfeed.feed.schemas import CreatePost, PostPage, PostView, TagPath
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, created_response, json_response
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.parameters import Cursor, IdempotencyKey
from shopfeed.platform.problems import problem_responses

router = Router()


@router.post(
    "/posts",
    summary="Write a post (Idempotency-Key required): the post and one item per tag in one transaction; "
    "the media it names are checked (mine, uploaded, type and size) and kept first",
    status_code=201,
    responses=problem_responses(
        errors.MissingIdempotencyKey,
        errors.IdempotencyKeyReused,
        errors.NotFound,
        errors.Contention,
        MediaUnusable,
        ok=201,
    ),
    tags=["posts"],
)
def create_post(
    body: CreatePost,
    caller: CurrentCaller,
    store: Store,
    threshold: CelebrityThreshold,
    idempotency_key: IdempotencyKey = None,
) -> Response[PostView]:
    request = IdempotentRequest.of(caller.user_id, idempotency_key, "create-post", body.model_dump(mode="json"))
    media = bootstrap.media_storage() if body.media_ids else None  # a post without media never builds it
    created = services.create_post(
        store, caller, request, body.text, tuple(body.tags), threshold, tuple(body.media_ids), media
    )
    post = created.value
    if not created.replayed:
        logger.info("post created", post_id=post.post_id, delivery=post.delivery, tags=len(post.tags))
        metrics.add_metric(name="PostCreated", unit="Count", value=1)
    return created_response(post_view(post), created.replayed, location=f"/posts/{post.post_id}")


@router.get(
    "/posts/<post_id>",
    summary="Get a post with its counters (FEED-004): one strongly consistent GetItem; its media as "
    "presigned download links",
    responses=problem_responses(errors.NotFound),
    tags=["posts"],
)
def get_post(post_id: PostPath, caller: CurrentCaller, store: Store) -> Response[PostView]:
    return json_response(post_view(services.read_post(store, post_id)))


@router.delete(
    "/posts/<post_id>",
    summary="Delete my post: the post, its tag items, and (asynchronously) its entries in followers' feeds",
    status_code=204,
    responses=problem_responses(errors.NotFound, errors.Forbidden, errors.Contention, ok=204),
    tags=["posts"],
)
def delete_post(post_id: PostPath, caller: CurrentCaller, store: Store) -> Response[None]:
    post = services.delete_post(store, caller, post_id)
    logger.info("post deleted", post_id=post.post_id)
    metrics.add_metric(name="PostDeleted", unit="Count", value=1)
    return Response(status_code=204)


@router.get(
    "/users/<user_id>/posts",
    summary="A user's posts, newest first (FEED-002)",
    responses=problem_responses(errors.InvalidCursor),
    tags=["posts"],
)
def list_user_posts(
    user_id: UserPath,
    caller: CurrentCaller,
    store: Store,
    limit: Annotated[int, Query(ge=1, le=50)] = 50,
    cursor: Cursor = None,
) -> PostPage:
    author = caller.user_id if user_id == "me" else user_id
    page = services.list_posts_of_author(store, author, limit, cursor)
    return PostPage(items=page.items, next_cursor=page.next_cursor)


@router.get(
    "/tags/<tag>/posts",
    summary="Posts with a tag, newest first (FEED-007): one Query per tag shard, merged",
    responses=problem_responses(errors.InvalidCursor),
    tags=["posts"],
)
def list_tag_posts(
    tag: Annotated[TagPath, Path(description="Case-insensitive: 'DynamoDB' is the tag 'dynamodb'")],
    caller: CurrentCaller,
    store: Store,
    limit: Annotated[int, Query(ge=1, le=200)] = 200,
    cursor: Cursor = None,
) -> PostPage:
    page = services.list_posts_with_tag(store, tag, limit, cursor)
    return PostPage(items=page.items, next_cursor=page.next_cursor)
