"""The payment queue's handler (functions/payment_worker): each message settles one attempt or refund
once, however often it comes; failed messages are held back on the queue, longer after each receive."""

from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse

from shopfeed.commerce import bootstrap
from shopfeed.commerce.payments import worker


def settle_payments(event: Mapping[str, Any], processor: BatchProcessor) -> PartialItemFailureResponse:
    """A batch of payment queue messages, each settled on its own; failed ones are held back, longer
    after each receive (``commerce.payments.worker.BACKOFF``)."""
    store, provider = bootstrap.payment_worker_ports()
    redelivery, backoff = bootstrap.payment_redelivery()
    return worker.handle_batch(event, processor, store, provider, redelivery, backoff)
