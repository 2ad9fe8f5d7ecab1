"""Write-time fanout: a new post reaches each follower's feed as one small entry item, a page at a time.

The FeedTable stream consumer never reads an audience: for each new (or deleted) post it puts one
``FanoutTask`` on the fanout queue. The worker handles one task per message: one Query for a page of
the author's followers, their feed entries written (or deleted) with BatchWriteItem, every
UnprocessedItems retried, then the task of the next page put on the queue. Authors above the celebrity
threshold are not fanned out (readers merge their recent posts instead).

What keeps it exact under at-least-once delivery:

- An entry's key is (follower, post) and its content comes from the task alone, so a redelivered
  task (or a whole chain of them) writes the very same items again: no duplicates.
- A post deleted before its fanout reaches a page: the page checks the post first and writes nothing.
- A post deleted *while* a page is written: the deletion's own fanout (``REMOVE`` tasks, through this
  same queue) may already have passed these followers. So after writing, the page checks the post once
  more (strongly consistent) and removes what it wrote if it is gone. If the post was still there,
  the deletion came later, and its REMOVE tasks (which start after it) find these entries.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Final, Protocol

from pydantic import BaseModel, ConfigDict

from shopfeed.platform import queues
from shopfeed.platform.clock import epoch_seconds

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

# Followers per task: one Query page (follower edges are small, far below the 1 MB page limit) and
# 40 BatchWriteItem calls, a few seconds of work at most for one invocation.
PAGE_SIZE: Final = 1000


class FanoutAction(StrEnum):
    ADD = "add"
    REMOVE = "remove"


class FanoutTask(BaseModel):
    """One fanout queue message: a post to add to (or remove from) one page of its author's followers."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    action: FanoutAction
    post_id: str
    author_id: str
    created_at: str
    # Where the author's follower list resumes (opaque, from the store); None = the first page.
    page: str | None = None

    def at(self, page: str) -> "FanoutTask":
        return self.model_copy(update={"page": page})


@dataclass(frozen=True)
class FollowerPage:
    followers: list[str]
    next_page: str | None


class FanoutStore(Protocol):
    """The FeedTable side of fanout (FanoutRepository, or an in-memory fake in unit tests)."""

    def followers(self, author_id: str, page: str | None, limit: int) -> FollowerPage:
        """One page of the author's followers (one Query) and where the next page starts."""
        ...

    def post_exists(self, post_id: str) -> bool:
        """Whether the post is still there, strongly consistent."""
        ...

    def add_entries(self, task: FanoutTask, followers: Sequence[str], expires_at: int) -> None:
        """Put one feed entry per follower; returns only when DynamoDB has written every one."""
        ...

    def remove_entries(self, post_id: str, followers: Sequence[str]) -> None:
        """Delete the post's feed entry of each follower (absent ones are fine)."""
        ...


class TaskQueue(Protocol):
    """The fanout queue (SqsTaskQueue, or an in-memory fake)."""

    def send(self, tasks: Sequence[FanoutTask]) -> dict[int, str]:
        """Enqueue ``tasks``; returns why each refused one failed, by its position in ``tasks``."""
        ...


class TasksNotQueued(Exception):
    """The queue refused the next page's task: the current message fails and is delivered again."""


@dataclass(frozen=True)
class PageReport:
    """What one task did: entries written or removed, and whether it stopped because the post is gone."""

    written: int = 0
    removed: int = 0
    continued: bool = False
    post_gone: bool = False


def entry_expiry(task: FanoutTask, retention: timedelta) -> int:
    """TTL of the post's entries: from the post's time, so every redelivery writes the same item."""
    return epoch_seconds(datetime.fromisoformat(task.created_at) + retention)


def run_page(
    task: FanoutTask, store: FanoutStore, queue: TaskQueue, retention: timedelta, page_size: int = PAGE_SIZE
) -> PageReport:
    """Fan one page of followers out (or in), then enqueue the next page's task."""
    if task.action is FanoutAction.REMOVE:
        page = store.followers(task.author_id, task.page, page_size)
        store.remove_entries(task.post_id, page.followers)
        _continue(task, page, queue)
        return PageReport(removed=len(page.followers), continued=page.next_page is not None)
    if not store.post_exists(task.post_id):
        return PageReport(post_gone=True)
    page = store.followers(task.author_id, task.page, page_size)
    store.add_entries(task, page.followers, entry_expiry(task, retention))
    if not store.post_exists(task.post_id):
        # Deleted while this page was written: its REMOVE tasks may have passed these followers already.
        store.remove_entries(task.post_id, page.followers)
        return PageReport(removed=len(page.followers), post_gone=True)
    _continue(task, page, queue)
    return PageReport(written=len(page.followers), continued=page.next_page is not None)


def _continue(task: FanoutTask, page: FollowerPage, queue: TaskQueue) -> None:
    # After the writes, never before: if this invocation fails, its message comes back and the chain
    # goes on from here, instead of a second chain running from the next page on.
    if page.next_page is not None and (refused := queue.send([task.at(page.next_page)])):
        raise TasksNotQueued(refused[0])


class SqsTaskQueue:
    """The fanout queue in SQS: one message per task, its body the task as JSON."""

    def __init__(self, client: "SQSClient", queue_url: str) -> None:
        self._client = client
        self._queue_url = queue_url

    def send(self, tasks: Sequence[FanoutTask]) -> dict[int, str]:
        return queues.send_all(self._client, self._queue_url, [task.model_dump_json() for task in tasks])
