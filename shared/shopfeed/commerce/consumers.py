"""Record handlers of the CommerceTable stream consumer (functions/commerce_stream routes to them).

Each handler gets every record of its type in the batch and answers the failed ones; each is
idempotent, because a partial-batch retry delivers again every record after the first failure
(``platform.exactly_once``).
"""

from collections.abc import Sequence

from shopfeed.commerce import bootstrap, search
from shopfeed.platform import outbox, search_sync, streams
from shopfeed.platform.clock import utc_now
from shopfeed.platform.observability import logger, metrics


def relay_outbox_events(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """New outbox items → the event bus (the platform's relay, on the commerce outbox)."""
    publisher, repository = bootstrap.relay_ports()
    return outbox.relay_records(changes, publisher, repository, utc_now())


def sync_product_search(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Product changes → the products index, versioned so that no redelivery or reordering regresses
    a document (``platform.search_sync``). A product the index refuses fails its record alone; it is
    retried, then parked in the DLQ, and ``make reindex`` repairs the index once the cause is fixed."""
    index = bootstrap.search_index()
    if index is None:
        metrics.add_metric(name="SearchSyncSkipped", unit="Count", value=len(changes))
        return {}
    report = search_sync.sync(changes, search.PRODUCT_PROJECTION, index)
    for sequence_number, error in report.failures.items():
        logger.warning("search sync failed", sequence_number=sequence_number, error=str(error))
    metrics.add_metric(name="SearchDocumentsWritten", unit="Count", value=report.applied)
    metrics.add_metric(name="SearchSyncStale", unit="Count", value=report.stale)
    metrics.add_metric(name="SearchSyncFailed", unit="Count", value=len(report.failures))
    return report.failures
