"""CommerceTable calls of reviews: the buyer-checked create, the edit, the delete and the lists.

Same rules as ``commerce.orders.repository``: domain models out, failed conditions turned into domain errors
here (read by transaction label), cursors owned here. Round trips are named on every method. Reads
are plain queries over the shared pager; the product's rating counters are the stream consumer's
(``commerce.reviews.ratings``), never written here.
"""

from typing import Final

from boto3.dynamodb.conditions import Attr

from shopfeed.commerce import items, keys
from shopfeed.commerce.errors import PurchaseRequired
from shopfeed.commerce.models import Review, ReviewOrder, ReviewSummary
from shopfeed.platform import dynamo
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.dynamo import Transaction, Update
from shopfeed.platform.errors import AlreadyExists, NotFound, StaleVersion
from shopfeed.platform.models import Page
from shopfeed.platform.pagination import Reader, Source

# Transaction labels: cancellation reasons are read by these, never by position.
_PURCHASE: Final = "purchase"
_REVIEW: Final = "review"

_ORDERS: Final = {ReviewOrder.RECENT: keys.RECENT_REVIEWS_BY_PRODUCT, ReviewOrder.RATING: keys.TOP_REVIEWS_BY_PRODUCT}


def review_id(product_id: str, user_id: str) -> str:
    """How errors and logs name a review: its natural key."""
    return f"{product_id}/{user_id}"


class ReviewRepository:
    def __init__(self, table: dynamo.Table, cursors: CursorCodec) -> None:
        self._table = table
        self._pages = Reader(table, cursors)

    def add(self, review: Review) -> None:
        """One TransactWriteItems (1 round trip): a ConditionCheck that the author bought the product
        (``paid_orders > 0`` on their proof of purchase) and the review, put only if absent.

        Raises AlreadyExists (a second review: edit the first) or PurchaseRequired; either way nothing
        is written."""
        transaction = Transaction()
        bought = Attr(items.PAID_ORDERS).gt(0)
        transaction.add(_PURCHASE, self._table.check_op(keys.purchase(review.user_id, review.product_id), bought))
        transaction.add(_REVIEW, self._table.put_op(items.review_item(review), if_absent=True))
        try:
            self._table.transact(transaction, busy=f"review {review_id(review.product_id, review.user_id)}")
        except dynamo.TransactionCancelled as cancelled:
            # Checked first: a buyer whose order was cancelled since still holds their review.
            if cancelled.failed(_REVIEW):
                raise AlreadyExists("review", review_id(review.product_id, review.user_id)) from cancelled
            if cancelled.failed(_PURCHASE):
                raise PurchaseRequired(review.product_id) from cancelled
            raise

    def get(self, product_id: str, user_id: str) -> Review | None:
        """GetItem by the natural key, strongly consistent (1 round trip)."""
        item = self._table.get(keys.review(product_id, user_id))
        return items.review_from(item) if item else None

    def update(self, current: Review, edited: Review) -> None:
        """One UpdateItem (1 round trip): ``edited``'s rating, title, text, time and version, and the
        rating order's key, only if the stored review is still ``current`` (same version, same creation:
        a review deleted and written again starts at version 1 too). Raises NotFound or StaleVersion."""
        ident = review_id(current.product_id, current.user_id)
        edit = Update(
            set={
                "rating": edited.rating,
                "title": edited.title,
                "text": edited.text,
                "updated_at": edited.updated_at,
                "version": edited.version,
            }
        )
        # The rating order moves with the rating (the other keys read it too, and stay as they were).
        change = dynamo.reindexed(keys.INDEXES, items.review_item(edited), edit)
        guard = (
            Attr(dynamo.PARTITION).exists()
            & Attr("version").eq(current.version)
            & Attr("created_at").eq(current.created_at)
        )
        try:
            self._table.update(keys.review(current.product_id, current.user_id), change, guard)
        except dynamo.ConditionFailed as failed:
            if failed.current is None:
                raise NotFound("review", ident) from failed
            raise StaleVersion("review", ident, int(failed.current["version"])) from failed

    def remove(self, product_id: str, user_id: str) -> bool:
        """DeleteItem by the natural key (1 round trip); whether there was a review."""
        return self._table.delete(keys.review(product_id, user_id)) is not None

    def list_for_product(
        self, product_id: str, order: ReviewOrder, limit: int, cursor: str | None
    ) -> Page[ReviewSummary]:
        """One Query on the order's index (RecentReviewsByProduct or TopReviewsByProduct), descending."""
        source = Source(_ORDERS[order], keys.review_partition(product_id))
        return self._pages.page_of(
            items.review_summary_from, f"reviews:{product_id}:{order.value}", source, limit, cursor, forward=False
        )

    def list_for_user(self, user_id: str, limit: int, cursor: str | None) -> Page[ReviewSummary]:
        """One Query on ReviewsByUser, newest first."""
        source = Source(keys.REVIEWS_BY_USER, keys.user_reviews_partition(user_id))
        return self._pages.page_of(
            items.review_summary_from, f"reviews-by-user:{user_id}", source, limit, cursor, forward=False
        )
