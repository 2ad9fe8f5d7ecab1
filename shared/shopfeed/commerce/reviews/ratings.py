"""Product rating counters, kept from the CommerceTable stream's review records.

A review counts on its product's ``rating_count`` and ``rating_sum`` (the average is their quotient,
made when the product is read): written +1 and +rating, edited by the change of its rating, removed
-1 and -rating. ``platform.counters`` applies them: one TransactWriteItems per product per batch (the
``ADD`` of the batch's sums plus the records' sequence numbers added to the product's applied sets,
``APPLIED#<target>``, one per second of creation time), so a batch
delivered again, or again from a failed record, counts nothing twice, and a popular product takes one
counter write per batch however many reviews it gets.

The counters are not versioned: a review never changes the product's ETag, and the products search
sync skips the product's MODIFY (its version did not move).
"""

from collections.abc import Sequence

from shopfeed.commerce import bootstrap, items, keys
from shopfeed.platform import counters, streams
from shopfeed.platform.clock import utc_now
from shopfeed.platform.counters import Increment
from shopfeed.platform.observability import logger, metrics


def counted(change: streams.ItemChange) -> list[Increment]:
    """What a review record counts on its product. Raises KeyError / ValueError for an unreadable image."""
    if change.entity_type != items.REVIEW:
        return []
    if change.kind is streams.ChangeKind.MODIFY:
        new = items.review_summary_from(change.new_image or {})
        old = items.review_summary_from(change.old_image or {})
        moved = new.rating - old.rating
        # A title or text edit counts nothing (and needs no mark: counting nothing twice is exact).
        return [Increment(keys.product(new.product_id), items.RATING_SUM, moved)] if moved else []
    review = items.review_summary_from(change.image or {})
    sign = 1 if change.kind is streams.ChangeKind.INSERT else -1
    product = keys.product(review.product_id)
    return [Increment(product, items.RATING_COUNT, sign), Increment(product, items.RATING_SUM, sign * review.rating)]


def count_ratings(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """The stream consumer's handler of review records: the rating counters of their products.

    A review of a product that does not exist fails its record (retried, then the mapping's DLQ):
    ``ADD`` would otherwise create an item holding nothing but counters."""
    failures = counters.count(bootstrap.stream_table(), keys.applied_records, changes, counted, utc_now())
    for sequence_number, error in failures.items():
        logger.warning("review not counted", sequence_number=sequence_number, error=str(error))
    metrics.add_metric(name="RatingCounterFailed", unit="Count", value=len(failures))
    return failures
