"""Use cases of product reviews. No HTTP, no stream records: callers pass plain values in.

One review per user per product, by its natural key; only a buyer writes one (checked inside the
write itself); the author edits it with the version they read. The product's rating counters follow
from the table's stream (``commerce.reviews.ratings``).
"""

from typing import Protocol

from shopfeed.commerce.models import Review, ReviewOrder, ReviewSummary
from shopfeed.platform.clock import iso, utc_now
from shopfeed.platform.errors import NotFound, StaleVersion
from shopfeed.platform.identity import Caller
from shopfeed.platform.models import Page


class Reviews(Protocol):
    """The storage port of reviews (ReviewRepository)."""

    def add(self, review: Review) -> None: ...
    def get(self, product_id: str, user_id: str) -> Review | None: ...
    def update(self, current: Review, edited: Review) -> None: ...
    def remove(self, product_id: str, user_id: str) -> bool: ...
    def list_for_product(
        self, product_id: str, order: ReviewOrder, limit: int, cursor: str | None
    ) -> Page[ReviewSummary]: ...
    def list_for_user(self, user_id: str, limit: int, cursor: str | None) -> Page[ReviewSummary]: ...


def _ident(product_id: str, user_id: str) -> str:
    return f"{product_id}/{user_id}"


def write_review(reviews: Reviews, caller: Caller, product_id: str, rating: int, title: str, text: str) -> Review:
    """The caller's review of a product they bought. Raises PurchaseRequired, or AlreadyExists for a
    second one (edit it instead)."""
    now = iso(utc_now())
    review = Review(
        product_id=product_id,
        user_id=caller.user_id,
        rating=rating,
        title=title,
        text=text,
        created_at=now,
        updated_at=now,
        version=1,
    )
    reviews.add(review)
    return review


def read_review(reviews: Reviews, product_id: str, user_id: str) -> Review:
    review = reviews.get(product_id, user_id)
    if review is None:
        raise NotFound("review", _ident(product_id, user_id))
    return review


def edit_my_review(
    reviews: Reviews, caller: Caller, product_id: str, expected_version: int, rating: int, title: str, text: str
) -> Review:
    """Replace the rating, title and text of the caller's review, if it is still the version they read.

    Two round trips: the stored review is read first because the rating order's key holds its
    creation time, which an update expression cannot read (DynamoDB builds no strings from stored
    attributes). The write is conditioned on what was read, so a concurrent edit is still a 412."""
    current = read_review(reviews, product_id, caller.user_id)
    if current.version != expected_version:
        raise StaleVersion("review", _ident(product_id, caller.user_id), current.version)
    changes = {"rating": rating, "title": title, "text": text, "updated_at": iso(utc_now())}
    edited = current.model_copy(update={**changes, "version": current.version + 1})
    reviews.update(current, edited)
    return edited


def delete_my_review(reviews: Reviews, caller: Caller, product_id: str) -> bool:
    """Delete the caller's review (no error if there is none); whether there was one."""
    return reviews.remove(product_id, caller.user_id)


def list_product_reviews(
    reviews: Reviews, product_id: str, order: ReviewOrder, limit: int, cursor: str | None
) -> Page[ReviewSummary]:
    """A product's reviews, newest or best first. An unknown product has none (no read of the product:
    one round trip, as a category without products)."""
    return reviews.list_for_product(product_id, order, limit, cursor)


def list_user_reviews(reviews: Reviews, user_id: str, limit: int, cursor: str | None) -> Page[ReviewSummary]:
    """A user's reviews, newest first (reviews are public)."""
    return reviews.list_for_user(user_id, limit, cursor)
