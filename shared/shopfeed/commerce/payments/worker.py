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
from typing import TYPE_CHECKING, Protocol

from shopfeed.commerce import items
from shopfeed.commerce.models import PaymentStatus
from shopfeed.commerce.payments import services as payments
from shopfeed.commerce.payments.provider import PaymentProvider, ProviderUnavailable
from shopfeed.commerce.payments.services import PaymentTask, Settlement
from shopfeed.platform import queues, streams
from shopfeed.platform.observability import logger, metrics

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient


class PaymentQueue(Protocol):
    """Where new attempts wait for the worker (SqsPaymentQueue, or an in-memory fake)."""

    def send(self, tasks: Sequence[PaymentTask]) -> dict[int, str]:
        """Enqueue ``tasks``; why each refused one failed, by its position in ``tasks``."""
        ...


class SqsPaymentQueue:
    """The payment queue in SQS: one message per attempt, its body the task as JSON."""

    def __init__(self, client: "SQSClient", queue_url: str) -> None:
        self._client = client
        self._queue_url = queue_url

    def send(self, tasks: Sequence[PaymentTask]) -> dict[int, str]:
        return queues.send_all(self._client, self._queue_url, [task.model_dump_json() for task in tasks])


class TaskNotQueued(Exception):
    """The queue refused an attempt's message: its stream record fails and comes again."""


def enqueue_attempts(changes: Sequence[streams.ItemChange], queue: PaymentQueue) -> streams.Failures:
    """The stream's record handler for attempts: each new Pending attempt becomes one message. A refused
    message or an unreadable attempt fails its own record only; a record delivered again queues its
    task again, which is harmless (the worker settles an attempt once)."""
    tasks: dict[str, PaymentTask] = {}
    failures: streams.Failures = {}
    for change in changes:
        if change.kind is not streams.ChangeKind.INSERT:
            continue  # a MODIFY is the worker settling it
        try:
            attempt = items.payment_attempt_from(change.image or {})
        except (KeyError, ValueError) as error:  # ValueError includes pydantic's ValidationError
            failures[change.sequence_number] = error
            continue
        if attempt.status is PaymentStatus.PENDING:
            tasks[change.sequence_number] = PaymentTask(order_id=attempt.order_id, attempt_id=attempt.attempt_id)
    sequence_numbers = list(tasks)
    refused = queue.send(list(tasks.values())) if tasks else {}
    for position, reason in refused.items():
        failures[sequence_numbers[position]] = TaskNotQueued(reason)
    for sequence_number, failure in failures.items():
        logger.warning("payment attempt not queued", sequence_number=sequence_number, error=str(failure))
    metrics.add_metric(name="PaymentQueued", unit="Count", value=len(tasks) - len(refused))
    return failures


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
