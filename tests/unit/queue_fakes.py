"""An in-memory task queue (``platform.queues.TaskQueue``), for unit tests; tests/integration/
test_task_queue.py holds SqsTaskQueue to the same observable behaviour."""

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class InMemoryQueue[T]:
    """A FIFO of tasks (``TaskQueue``); ``refuse`` makes the next sends fail."""

    tasks: list[T] = field(default_factory=list)
    refuse: bool = False

    def send(self, tasks: Sequence[T]) -> dict[int, str]:
        if self.refuse:
            return dict.fromkeys(range(len(tasks)), "AWS.SimpleQueueService.Throttled: refused")
        self.tasks += tasks
        return {}

    def take(self) -> T | None:
        return self.tasks.pop(0) if self.tasks else None
