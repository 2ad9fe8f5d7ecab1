"""Task queues in SQS: a stream consumer turns records into tasks, a worker takes them one message each.

SendMessageBatch, like PutEvents, answers HTTP 200 with per-entry failures: a caller that does not
read ``Failed`` loses messages silently. So ``send`` answers every refused task by its position, and
``enqueue`` fails the stream record that made it (the record comes again and queues its task again,
which a worker must take as harmless: tasks are idempotent)::

    queue = queues.SqsTaskQueue[ShipmentTask](clients.sqs(), queue_url)
    failures = queues.enqueue(changes, shipment_task, queue, metric="ShipmentQueued", unqueued="shipment not queued")
"""

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Protocol

from pydantic import BaseModel

from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.streams import Failures, ItemChange, made_of

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

MAX_BATCH: Final = 10  # SQS's limit per SendMessageBatch


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
