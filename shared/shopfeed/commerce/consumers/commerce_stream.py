"""Record handlers of the CommerceTable stream consumer (functions/commerce_stream routes each record
type to one): the outbox relayed to the bus, products queued for the search sync, payment attempts
queued for the payment worker.

Each gets every record of its type in the batch and answers the failed ones; each is idempotent,
because a partial-batch retry delivers again every record after the first failure
(``platform.exactly_once``).
"""

from collections.abc import Sequence

from shopfeed.commerce import bootstrap
from shopfeed.commerce.catalog import search
from shopfeed.commerce.payments import worker as payment_worker
from shopfeed.platform import outbox_relay, streams
from shopfeed.platform.clock import utc_now
from shopfeed.platform.search import sync as search_sync


def relay_outbox_events(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """New outbox items → the event bus (the platform's relay, on the commerce outbox)."""
    publisher, repository = bootstrap.relay_ports()
    return outbox_relay.relay_records(changes, publisher, repository, utc_now())


def sync_product_search(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Product changes → their versioned writes, queued for the search sync worker, so that no
    redelivery or reordering regresses a document and no engine outage holds the batch
    (``platform.search.sync``); a product that cannot be indexed fails its record alone."""
    return search_sync.queue_writes(changes, search.PRODUCT_PROJECTION, bootstrap.search_sync_queue())


def queue_payment_attempts(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """New payment attempts → the payment queue, one message each (``commerce.payments.worker``)."""
    return payment_worker.enqueue_attempts(changes, bootstrap.payment_queue())
