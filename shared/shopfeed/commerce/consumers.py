"""Record handlers of the CommerceTable stream consumer (functions/commerce_stream routes to them).

Each handler gets every record of its type in the batch and answers the failed ones; each is
idempotent, because a partial-batch retry delivers again every record after the first failure
(``platform.exactly_once``).
"""

from collections.abc import Sequence

from shopfeed.commerce import items, outbox
from shopfeed.commerce.settings import CommerceStreamSettings
from shopfeed.platform import streams
from shopfeed.platform.clock import utc_now
from shopfeed.platform.config import settings
from shopfeed.platform.observability import logger, metrics


def relay_outbox_events(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """New outbox items → the event bus. An event the bus refused fails only its own record."""
    # A MODIFY is this relay marking the item published, a REMOVE is TTL: only INSERTs are news.
    inserted = [change for change in changes if change.kind is streams.ChangeKind.INSERT]
    events, failures = streams.parse_images(inserted, items.outbox_event_from)
    publisher, repository = outbox.ports(settings(CommerceStreamSettings))
    report = outbox.relay(list(events.values()), publisher, repository, utc_now())
    for sequence_number, event in events.items():
        if refused := report.failures.get(event.event_id):
            failures[sequence_number] = refused
    for sequence_number, error in failures.items():
        logger.warning("outbox event not published", sequence_number=sequence_number, error=str(error))
    metrics.add_metric(name="OutboxEventPublished", unit="Count", value=len(report.published))
    metrics.add_metric(name="OutboxPublishFailed", unit="Count", value=len(failures))
    return failures
