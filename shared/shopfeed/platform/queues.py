"""Task queues in SQS: a stream consumer turns records into tasks, a worker takes them one message each.

SendMessageBatch, like PutEvents, answers HTTP 200 with per-entry failures: a caller that does not
read ``Failed`` loses messages silently. So ``send`` answers every refused task by its position, and
``enqueue`` fails the stream record that made it (the record comes again and queues its task again,
which a worker must take as harmless: tasks are idempotent)::

    queue = queues.SqsTaskQueue[ShipmentTask](clients.sqs(), queue_url)
    failures = queues.enqueue(changes, shipment_task, queue, metric="ShipmentQueued", unqueued="shipment not queued")

A worker whose failures are an outage to wait out, not a bad message, backs them off (``Backoff``,
``retry_later``): each failed message comes back later the more often it failed.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import BaseModel

from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.streams import Failures, ItemChange, made_of

if TYPE_CHECKING:
    # Types only: Powertools' batch package imports its parser models (~45 ms), which an API never runs.
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
    from mypy_boto3_sqs import SQSClient

MAX_BATCH: Final = 10  # SQS's limit per SendMessageBatch (and per ChangeMessageVisibilityBatch)


class TaskQueue[T: BaseModel](Protocol):
    """Where tasks wait for their worker (SqsTaskQueue, or an in-memory fake in unit tests)."""

    def send(self, tasks: Sequence[T]) -> Mapping[int, str]:
        """Enqueue ``tasks``; why each refused one failed, by its position in ``tasks``."""
        ...


class SqsTaskQueue[T: BaseModel]:
    """A task queue in SQS: one message per task, its body the task as JSON, sent ten to a call."""

    def __init__(self, client: "SQSClient", queue_url: str) -> None:
        self._client = client
        self._queue_url = queue_url

    def send(self, tasks: Sequence[T]) -> dict[int, str]:
        refused: dict[int, str] = {}
        for start in range(0, len(tasks), MAX_BATCH):
            chunk = tasks[start : start + MAX_BATCH]
            response = self._client.send_message_batch(
                QueueUrl=self._queue_url,
                Entries=[{"Id": str(start + n), "MessageBody": task.model_dump_json()} for n, task in enumerate(chunk)],
            )
            for failure in response.get("Failed", []):
                refused[int(failure["Id"])] = f"{failure['Code']}: {failure.get('Message', '')}"
        return refused

    def retry_after(self, delays: Mapping[str, int]) -> dict[str, str]:
        receipts = list(delays)
        refused: dict[str, str] = {}
        for start in range(0, len(receipts), MAX_BATCH):
            chunk = receipts[start : start + MAX_BATCH]
            response = self._client.change_message_visibility_batch(
                QueueUrl=self._queue_url,
                Entries=[
                    {"Id": str(start + n), "ReceiptHandle": receipt, "VisibilityTimeout": delays[receipt]}
                    for n, receipt in enumerate(chunk)
                ],
            )
            for failure in response.get("Failed", []):
                refused[receipts[int(failure["Id"])]] = f"{failure['Code']}: {failure.get('Message', '')}"
        return refused


class TaskNotQueued(Exception):
    """The queue refused a task: the record (or message) that made it fails and comes back."""


def enqueue[T: BaseModel](
    changes: Sequence[ItemChange],
    task_of: Callable[[ItemChange], T | None],
    queue: TaskQueue[T],
    *,
    metric: str,
    unqueued: str,
) -> Failures:
    """A stream handler's whole work for a queue: each change's task (if ``task_of`` makes one) sent,
    in one SendMessageBatch per ten; an unreadable change or a refused task fails its own record only. Counts
    the tasks queued as ``metric`` and logs each failed record as ``unqueued``."""
    tasks, failures = made_of(changes, task_of)
    sequence_numbers = list(tasks)
    refused = queue.send(list(tasks.values())) if tasks else {}
    for position, reason in refused.items():
        failures[sequence_numbers[position]] = TaskNotQueued(reason)
    for sequence_number, error in failures.items():
        logger.warning(unqueued, sequence_number=sequence_number, error=str(error))
    metrics.add_metric(name=metric, unit="Count", value=len(tasks) - len(refused))
    return failures


# -- backing off failed messages ---------------------------------------------------------------------


class Redelivery(Protocol):
    """When received messages come back (SqsTaskQueue, or an in-memory fake in unit tests)."""

    def retry_after(self, delays: Mapping[str, int]) -> Mapping[str, str]:
        """Make each message (by receipt handle) visible again after its delay in seconds, counted
        from now; why each refused one failed, by receipt handle."""
        ...


@dataclass(frozen=True)
class Backoff:
    """How long a failed message waits before its next delivery: ``base`` seconds after its first
    receive, twice as long after each receive since, never more than ``cap``.

    Neither Lambda nor Powertools backs off a failed SQS message: Lambda leaves it on the queue, and
    SQS hands it out again when the queue's visibility timeout ends, the same wait after every
    failure (Lambda's own backoff slows its polling after function errors, and with
    ReportBatchItemFailures not even that); Powertools' batch processor only reports the failures.
    So the worker sets each failed message's visibility itself (``retry_later``).
    """

    base: int
    cap: int

    def delay(self, receive_count: int) -> int:
        """The wait after the ``receive_count``-th receive failed (SQS counts from 1)."""
        doublings = min(max(receive_count, 1) - 1, 32)  # past the cap long before 2**32
        return min(self.cap, self.base << doublings)

    def outlasts(self, receives: int) -> int:
        """The seconds a message waits out before its ``receives``-th failure is its last: the shortest
        outage that moves it to the dead-letter queue of a queue whose maxReceiveCount is ``receives``
        (its processing time only adds to it)."""
        return sum(self.delay(n) for n in range(1, receives + 1))


def retry_later(
    records: Sequence[SQSRecord], failures: Mapping[str, Exception], queue: Redelivery, backoff: Backoff
) -> "PartialItemFailureResponse":
    """A batch worker's partial batch response: each failed message (``failures`` by message id) is
    made visible again after ``backoff.delay`` of its receive count, then reported failed, so Lambda
    leaves it on the queue; the others are deleted by Lambda. A visibility SQS refused to change is
    logged: that message comes back after the queue's visibility timeout instead."""
    failed = [record for record in records if record.message_id in failures]
    delays = {r.receipt_handle: backoff.delay(int(r.attributes.approximate_receive_count)) for r in failed}
    for receipt_handle, reason in (queue.retry_after(delays) if delays else {}).items():
        logger.warning("message not held back", receipt_handle=receipt_handle, error=reason)
    return {"batchItemFailures": [{"itemIdentifier": record.message_id} for record in failed]}
