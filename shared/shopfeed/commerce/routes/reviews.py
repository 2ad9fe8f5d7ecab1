"""Product reviews: one per user per product, by buyers only; a product's newest or best first, a user's."""

from typing import Annotated
from urllib.parse import quote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shopfeed.commerce import bootstrap
from shopfeed.commerce.errors import PurchaseRequired
from shopfeed.commerce.models import Review, ReviewOrder
from shopfeed.commerce.reviews import services as reviews
from shopfeed.commerce.reviews.schemas import ReviewPage, ReviewView, WriteReview
from shopfeed.commerce.types import ProductId
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, json_response
from shopfeed.platform.observability import metrics
from shopfeed.platform.parameters import Cursor, IfMatch
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.types import UserId
from shopfeed.platform.versioning import expected_version

router = Router()
ReviewStore = Annotated[reviews.Reviews, Depends(bootstrap.reviews)]
ProductPath = Annotated[ProductId, Path()]
UserPath = Annotated[UserId, Path(description="A user id, percent-encoded; 'me' is the caller")]
Limit = Annotated[int, Query(ge=1, le=200)]


def _location(review: Review) -> str:
    return f"/products/{review.product_id}/reviews/{quote(review.user_id, safe='')}"


@router.post(
    "/products/<product_id>/reviews",
    summary="Review a product you bought (one review per user per product; the purchase is checked "
    "in the same transaction: one round trip)",
    status_code=201,
    responses=problem_responses(PurchaseRequired, errors.AlreadyExists, errors.Contention, ok=201),
    tags=["reviews"],
)
def write_review(
    product_id: ProductPath, body: WriteReview, caller: CurrentCaller, store: ReviewStore
) -> Response[ReviewView]:
    review = reviews.write_review(store, caller, product_id, body.rating, body.title, body.text)
    metrics.add_metric(name="ReviewWritten", unit="Count", value=1)
    return json_response(ReviewView.fields_of(review), 201, review.version, {"Location": _location(review)})


@router.get(
    "/products/<product_id>/reviews",
    summary="A product's reviews, newest first (sort=recent) or best first, ties newest first (sort=rating)",
    responses=problem_responses(errors.InvalidCursor),
    tags=["reviews"],
)
def list_reviews(
    product_id: ProductPath,
    caller: CurrentCaller,
    store: ReviewStore,
    sort: Annotated[ReviewOrder, Query()] = ReviewOrder.RECENT,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> ReviewPage:
    page = reviews.list_product_reviews(store, product_id, sort, limit, cursor)
    return ReviewPage(items=[ReviewView.fields_of(review) for review in page.items], next_cursor=page.next_cursor)


@router.get(
    "/products/<product_id>/reviews/<user_id>",
    summary="One user's review of a product ('me' is mine), with its ETag for an edit",
    responses=problem_responses(errors.NotFound),
    tags=["reviews"],
)
def get_review(
    product_id: ProductPath, user_id: UserPath, caller: CurrentCaller, store: ReviewStore
) -> Response[ReviewView]:
    review = reviews.read_review(store, product_id, caller.user_id if user_id == "me" else user_id)
    return json_response(ReviewView.fields_of(review), version=review.version)


@router.put(
    "/products/<product_id>/reviews/me",
    summary="Edit my review: rating, title and text replaced (If-Match required)",
    responses=problem_responses(errors.NotFound, errors.PreconditionRequired, errors.StaleVersion),
    tags=["reviews"],
)
def edit_my_review(
    product_id: ProductPath, body: WriteReview, caller: CurrentCaller, store: ReviewStore, if_match: IfMatch = None
) -> Response[ReviewView]:
    version = expected_version(if_match)
    review = reviews.edit_my_review(store, caller, product_id, version, body.rating, body.title, body.text)
    return json_response(ReviewView.fields_of(review), version=review.version)


@router.delete(
    "/products/<product_id>/reviews/me",
    summary="Delete my review (no-op if there is none); the product's counters follow",
    status_code=204,
    responses=problem_responses(ok=204),
    tags=["reviews"],
)
def delete_my_review(product_id: ProductPath, caller: CurrentCaller, store: ReviewStore) -> Response[None]:
    if reviews.delete_my_review(store, caller, product_id):
        metrics.add_metric(name="ReviewDeleted", unit="Count", value=1)
    return Response(status_code=204)


@router.get(
    "/users/<user_id>/reviews",
    summary="A user's reviews, newest first ('me' is mine)",
    responses=problem_responses(errors.InvalidCursor),
    tags=["reviews"],
)
def list_user_reviews(
    user_id: UserPath, caller: CurrentCaller, store: ReviewStore, limit: Limit = 50, cursor: Cursor = None
) -> ReviewPage:
    author = caller.user_id if user_id == "me" else user_id
    page = reviews.list_user_reviews(store, author, limit, cursor)
    return ReviewPage(items=[ReviewView.fields_of(review) for review in page.items], next_cursor=page.next_cursor)
