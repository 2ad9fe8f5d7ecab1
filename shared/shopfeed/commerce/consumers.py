"""Record handlers of the CommerceTable stream consumers (functions/commerce_stream and
functions/stock_rebalancer route to them), and of the payment queue (functions/payment_worker).

Each stream handler gets every record of its type in the batch and answers the failed ones; each is
idempotent, because a partial-batch retry delivers again every record after the first failure
(``platform.exactly_once``). The payment worker settles an attempt once however often its message comes.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse

from shopfeed.commerce import bootstrap
from shopfeed.commerce.catalog import search
from shopfeed.commerce.inventory import rebalancer
from shopfeed.commerce.payments import worker as payment_worker
from shopfeed.commerce.payments.services import Settlement
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


def settle_payment(body: str) -> Settlement:
    """One payment queue message: call the provider for its attempt (or refund) and record the outcome."""
    return payment_worker.handle_message(body, *bootstrap.payment_worker_ports())


def settle_payments(event: Mapping[str, Any], processor: BatchProcessor) -> PartialItemFailureResponse:
    """A batch of payment queue messages, each settled on its own; failed ones are held back, longer
    after each receive (``commerce.payments.worker.BACKOFF``)."""
    store, provider = bootstrap.payment_worker_ports()
    redelivery, backoff = bootstrap.payment_redelivery()
    return payment_worker.handle_batch(event, processor, store, provider, redelivery, backoff)


def rebalance_stock(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Stock buckets left below the low-water mark: their products' buckets evened out."""
    return rebalancer.rebalance_low_buckets(bootstrap.rebalancer(), changes)
