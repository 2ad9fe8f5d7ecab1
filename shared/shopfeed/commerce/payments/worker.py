"""The payment queue between the CommerceTable stream and the payment worker, and the worker's
message handling.

The provider is called from a queue worker, not from the stream consumer: a slow or failing provider
must not hold the table's shard (the same consumer relays the outbox and syncs search), and a stream's
on-failure destination records only where the failed batch was, while a queue's dead-letter queue
keeps the message itself, ready to be redriven. A failed message is held back longer after each
receive (``BACKOFF``: an unavailable provider is an outage to wait out, not a reason to call it every
three minutes) and moves to the dead-letter queue after ``maxReceiveCount`` receives, its attempt
(or refund) still Pending: listed by ``GET /payments?status=Pending`` and ``GET /orders/{id}/payments``.

Refunds share the queue and the worker: a refund started on an attempt (a MODIFY of the attempt
whose refund became Pending) is one message naming the refund as well.
"""

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Final, cast

from aws_lambda_powertools.utilities.batch import BatchProcessor
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSEvent, SQSRecord
from pydantic import Field, TypeAdapter

from shopfeed.commerce import items
from shopfeed.commerce.models import PaymentStatus, RefundStatus
from shopfeed.commerce.payments import services as payments
from shopfeed.commerce.payments.provider import PaymentProvider, ProviderUnavailable
from shopfeed.commerce.payments.repository import PaymentRepository
from shopfeed.commerce.payments.services import PaymentTask, RefundTask, Settlement
from shopfeed.platform import queues, streams
from shopfeed.platform.observability import logger, metrics

PaymentQueue = queues.TaskQueue[PaymentTask]
"""Where new attempts wait for the worker (``platform.queues``, or an in-memory fake)."""


# Held back 30 s after the first failed receive, then 60, 120, 240: with PaymentQueue's 5 receives a
# provider outage of about 7.5 minutes is waited out before a message is parked in PaymentDLQ. The
# base is the template's PaymentRetrySeconds (bootstrap.payment_redelivery); the e2e stack uses 1 s.
BACKOFF: Final = queues.Backoff(base=30, cap=900)


def payment_task(change: streams.ItemChange) -> PaymentTask | None:
    """The task of a new Pending attempt, or of a refund that became Pending on an attempt; None for
    anything else (the worker settling either)."""
    attempt = items.payment_attempt_from(change.image or {})
    if change.kind is streams.ChangeKind.INSERT:
        if attempt.status is not PaymentStatus.PENDING:
            return None
        return PaymentTask(order_id=attempt.order_id, attempt_id=attempt.attempt_id)
    refund = attempt.refund
    if change.kind is not streams.ChangeKind.MODIFY or refund is None or refund.status is not RefundStatus.PENDING:
        return None
    before = items.payment_attempt_from(change.old_image or {}).refund
    if before is not None and before.refund_id == refund.refund_id:
        return None  # the same refund, already queued when it started
    return RefundTask(order_id=attempt.order_id, attempt_id=attempt.attempt_id, refund_id=refund.refund_id)


def enqueue_attempts(changes: Sequence[streams.ItemChange], queue: PaymentQueue) -> streams.Failures:
    """The stream's record handler for attempts: each new Pending attempt becomes one message. A refused
    message or an unreadable attempt fails its own record only; a record delivered again queues its
    task again, which is harmless (the worker settles an attempt once)."""
    return queues.enqueue(changes, payment_task, queue, metric="PaymentQueued", unqueued="payment attempt not queued")


_METRICS = {
    Settlement.AUTHORIZED: "PaymentAuthorized",
    Settlement.DECLINED: "PaymentDeclined",
    Settlement.ALREADY_SETTLED: "PaymentAlreadySettled",
    Settlement.REFUNDED: "PaymentRefunded",
    Settlement.REFUND_DECLINED: "RefundDeclined",
}
# A refund's message names its refund; an attempt's does not (left to right: the refund first).
_TASKS: Final = TypeAdapter[RefundTask | PaymentTask](
    Annotated[RefundTask | PaymentTask, Field(union_mode="left_to_right")]
)


def handle_message(body: str, store: PaymentRepository, provider: PaymentProvider) -> Settlement:
    """The worker's record handler: one message, one attempt (or refund) settled. An unreadable body
    (pydantic's ValidationError), an unknown attempt or an unavailable provider raise: that message
    alone fails, comes back later, and ends in the dead-letter queue if it keeps failing."""
    task = _TASKS.validate_json(body)
    refund_id = task.refund_id if isinstance(task, RefundTask) else None
    try:
        if isinstance(task, RefundTask):
            settled = payments.settle_refund(store, provider, task)
        else:
            settled = payments.settle_payment(store, provider, task)
    except ProviderUnavailable:
        logger.warning(
            "payment provider unavailable", order_id=task.order_id, attempt_id=task.attempt_id, refund_id=refund_id
        )
        metrics.add_metric(name="PaymentProviderUnavailable", unit="Count", value=1)
        raise
    logger.info(
        "payment handled",
        order_id=task.order_id,
        attempt_id=task.attempt_id,
        refund_id=refund_id,
        settlement=settled.value,
    )
    metrics.add_metric(name=_METRICS[settled], unit="Count", value=1)
    return settled


def handle_batch(
    event: Mapping[str, Any],
    processor: BatchProcessor,
    store: PaymentRepository,
    provider: PaymentProvider,
    redelivery: queues.Redelivery,
    backoff: queues.Backoff = BACKOFF,
) -> PartialItemFailureResponse:
    """The worker's whole handler: each message handled on its own by Powertools' batch processor, and
    every failed one held back on the queue by its receive count (``queues.retry_later``)."""

    def handle(record: SQSRecord) -> None:
        handle_message(record.body, store, provider)

    records = list(SQSEvent(dict(event)).records)
    with processor(records=list(event["Records"]), handler=handle):
        processor.process()
    # The processor keeps each failed record with its exception, in the order they failed.
    failures = {
        cast(SQSRecord, record).message_id: cast(Exception, info[1])
        for record, info in zip(processor.fail_messages, processor.exceptions, strict=True)
    }
    return queues.retry_later(records, failures, redelivery, backoff)
