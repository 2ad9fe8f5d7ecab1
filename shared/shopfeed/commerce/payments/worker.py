"""The payment queue between the CommerceTable stream and the payment worker, and the worker's
message handling.

The provider is called from a queue worker, not from the stream consumer: a slow or failing provider
must not hold the table's shard (the same consumer relays the outbox and syncs search), and a stream's
on-failure destination records only where the failed batch was, while a queue's dead-letter queue
keeps the message itself, ready to be redriven. Retries are the queue's: a failed message comes back
after the visibility timeout and moves to the dead-letter queue after ``maxReceiveCount`` receives,
its attempt still Pending (and listed by ``GET /payments?status=Pending``).
"""

from collections.abc import Sequence

from shopfeed.commerce import items
from shopfeed.commerce.models import PaymentStatus
from shopfeed.commerce.payments import services as payments
from shopfeed.commerce.payments.provider import PaymentProvider, ProviderUnavailable
from shopfeed.commerce.payments.services import PaymentTask, Settlement
from shopfeed.platform import queues, streams
from shopfeed.platform.observability import logger, metrics

PaymentQueue = queues.TaskQueue[PaymentTask]
"""Where new attempts wait for the worker (``platform.queues``, or an in-memory fake)."""


def payment_task(change: streams.ItemChange) -> PaymentTask | None:
    """The task of a new Pending attempt; None for anything else (a MODIFY is the worker settling it)."""
    if change.kind is not streams.ChangeKind.INSERT:
        return None
    attempt = items.payment_attempt_from(change.image or {})
    if attempt.status is not PaymentStatus.PENDING:
        return None
    return PaymentTask(order_id=attempt.order_id, attempt_id=attempt.attempt_id)


def enqueue_attempts(changes: Sequence[streams.ItemChange], queue: PaymentQueue) -> streams.Failures:
    """The stream's record handler for attempts: each new Pending attempt becomes one message. A refused
    message or an unreadable attempt fails its own record only; a record delivered again queues its
    task again, which is harmless (the worker settles an attempt once)."""
    return queues.enqueue(changes, payment_task, queue, metric="PaymentQueued", unqueued="payment attempt not queued")


_METRICS = {
    Settlement.AUTHORIZED: "PaymentAuthorized",
    Settlement.DECLINED: "PaymentDeclined",
    Settlement.ALREADY_SETTLED: "PaymentAlreadySettled",
}


def handle_message(body: str, store: payments.Payments, provider: PaymentProvider) -> Settlement:
    """The worker's record handler: one message, one attempt settled. An unreadable body (pydantic's
    ValidationError), an unknown attempt or an unavailable provider raise: that message alone fails,
    comes back after the visibility timeout, and ends in the dead-letter queue if it keeps failing."""
    task = PaymentTask.model_validate_json(body)
    try:
        settled = payments.settle_payment(store, provider, task)
    except ProviderUnavailable:
        logger.warning("payment provider unavailable", order_id=task.order_id, attempt_id=task.attempt_id)
        metrics.add_metric(name="PaymentProviderUnavailable", unit="Count", value=1)
        raise
    logger.info("payment handled", order_id=task.order_id, attempt_id=task.attempt_id, settlement=settled.value)
    metrics.add_metric(name=_METRICS[settled], unit="Count", value=1)
    return settled
