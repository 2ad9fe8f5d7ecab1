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
- A follower who unfollows *while* a page is written: the unfollow's cleanup (``home.backfill``) may
  already have passed this post. So after writing, the page reads the same range of edges again
  (strongly consistent) and takes the entry back from whoever is gone (and gives it to whoever came
  back), until a read after its last write agrees with what it wrote. An unfollow after that read
  starts a cleanup that finds the entry. Both reads of the edges are strong: a follow written before
  the first read is seen by it, one written after is followed by a backfill (``home.backfill``).
"""

import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, Protocol

from pydantic import BaseModel, ConfigDict

from shopfeed.feed import items, keys
from shopfeed.feed.models import Delivery, FeedEntry
from shopfeed.feed.settings import FANOUT_PAGE_SIZE
from shopfeed.platform import batch_writes, dynamo, queues, streams
from shopfeed.platform.dynamo import BASE_TABLE
from shopfeed.platform.pagination import UNSIGNED, query_page

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import WriteRequestTypeDef

PAGE_SIZE: Final = FANOUT_PAGE_SIZE


class FanoutAction(StrEnum):
    ADD = "add"
    REMOVE = "remove"


class FanoutTask(BaseModel):
    """One fanout queue message: a post's entry to add to (or remove from) one page of its author's
    followers' feeds."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    action: FanoutAction
    entry: FeedEntry
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

    def followers_between(self, author_id: str, first: str, last: str) -> set[str]:
        """The author's followers from ``first`` to ``last`` (in the page's order, both included) as
        they are now, strongly consistent: a page's range read again."""
        ...

    def post_exists(self, post_id: str) -> bool:
        """Whether the post is still there, strongly consistent."""
        ...

    def add_entries(self, entry: FeedEntry, followers: Sequence[str]) -> None:
        """Put the entry in each follower's feed; returns only when DynamoDB has written every one."""
        ...

    def remove_entries(self, entry: FeedEntry, followers: Sequence[str]) -> None:
        """Delete the entry from each follower's feed (absent ones are fine)."""
        ...


TaskQueue = queues.TaskQueue[FanoutTask]
"""The fanout queue (``platform.queues``, or an in-memory fake)."""


# How often a page (or a follow task) re-reads the edges after correcting its writes before it gives up
# and fails its message (which comes back): each round needs the edge to change again meanwhile.
SETTLE_ROUNDS: Final = 4


class EdgesKeptChanging(Exception):
    """The follow edges a task wrote for kept changing under it; its message fails and comes back."""

    def __init__(self, author_id: str) -> None:
        super().__init__(f"follow edges of {author_id} kept changing while their feed entries were written")
        self.author_id = author_id


@dataclass(frozen=True)
class PageReport:
    """What one task did: entries written or removed, and whether it stopped because the post is gone."""

    written: int = 0
    removed: int = 0
    continued: bool = False
    post_gone: bool = False


def run_page(task: FanoutTask, store: FanoutStore, queue: TaskQueue, page_size: int = PAGE_SIZE) -> PageReport:
    """Fan one page of followers out (or in), then enqueue the next page's task."""
    entry = task.entry
    if task.action is FanoutAction.REMOVE:
        page = store.followers(entry.author_id, task.page, page_size)
        store.remove_entries(entry, page.followers)
        _continue(task, page, queue)
        return PageReport(removed=len(page.followers), continued=page.next_page is not None)
    if not store.post_exists(entry.post_id):
        return PageReport(post_gone=True)
    page = store.followers(entry.author_id, task.page, page_size)
    store.add_entries(entry, page.followers)
    written = _settle(entry, page.followers, store)
    if not store.post_exists(entry.post_id):
        # Deleted while this page was written: its REMOVE tasks may have passed these followers already.
        store.remove_entries(entry, page.followers)
        return PageReport(removed=len(page.followers), post_gone=True)
    _continue(task, page, queue)
    return PageReport(written=len(written), continued=page.next_page is not None)


def _settle(entry: FeedEntry, page: Sequence[str], store: FanoutStore) -> set[str]:
    """Read the page's range of edges again after writing it, until a read agrees with what was
    written: the entry taken back from followers who left meanwhile (their cleanup may have passed
    this post already), given to those who came back. Answers the followers holding the entry."""
    written = set(page)
    for _ in range(SETTLE_ROUNDS):
        following = store.followers_between(entry.author_id, page[0], page[-1]) & set(page) if page else set()
        gone, back = written - following, following - written
        if not gone and not back:
            return written
        store.remove_entries(entry, sorted(gone))
        store.add_entries(entry, sorted(back))
        written = following
    raise EdgesKeptChanging(entry.author_id)


def _continue(task: FanoutTask, page: FollowerPage, queue: TaskQueue) -> None:
    # After the writes, never before: if this invocation fails, its message comes back and the chain
    # goes on from here, instead of a second chain running from the next page on.
    if page.next_page is not None and (refused := queue.send([task.at(page.next_page)])):
        raise queues.TaskNotQueued(refused[0])


class FanoutRepository:
    """Every FeedTable call of fanout: follower pages, the post check, feed entries in and out."""

    def __init__(self, table: dynamo.Table, sleep: batch_writes.Sleep = time.sleep) -> None:
        self._table = table
        self._sleep = sleep

    def followers(self, author_id: str, page: str | None, limit: int) -> FollowerPage:
        # The page travels in the worker's own queue messages, never through a client: unsigned.
        edges, next_page = query_page(
            self._table,
            UNSIGNED,
            f"fanout:{author_id}",
            BASE_TABLE,
            keys.user_partition(author_id),
            limit,
            page,
            where=lambda sk: sk.begins_with(keys.FOLLOWER),
            # Strong: a follow written before this read must be in it (else only its backfill can bring
            # the post, which reads an index: see home.backfill), and the page's second read must see
            # an unfollow that happened before it.
            consistent=True,
        )
        return FollowerPage([keys.parse_follower_id(str(edge["SK"])) for edge in edges], next_page)

    def followers_between(self, author_id: str, first: str, last: str) -> set[str]:
        low, high = keys.follow(author_id, first)["SK"], keys.follow(author_id, last)["SK"]
        found: set[str] = set()
        start: dict[str, Any] | None = None
        while True:
            response = self._table.query(
                BASE_TABLE,
                keys.user_partition(author_id),
                where=lambda sk: sk.between(low, high),
                start=start,
                consistent=True,
            )
            found |= {keys.parse_follower_id(str(dynamo.deserialize(edge)["SK"])) for edge in response["Items"]}
            if "LastEvaluatedKey" not in response:
                return found
            start = dict(response["LastEvaluatedKey"])

    def post_exists(self, post_id: str) -> bool:
        return self._table.get(keys.post(post_id), consistent=True) is not None

    def add_entries(self, entry: FeedEntry, followers: Sequence[str]) -> None:
        self._write([{"PutRequest": {"Item": dynamo.serialize(items.feed_entry_item(f, entry))}} for f in followers])

    def remove_entries(self, entry: FeedEntry, followers: Sequence[str]) -> None:
        self._write(
            [
                {"DeleteRequest": {"Key": dynamo.serialize(keys.feed_entry(f, entry.created_at, entry.post_id))}}
                for f in followers
            ]
        )

    # -- follow backfill and unfollow cleanup (home.backfill) --

    def is_following(self, author_id: str, follower_id: str) -> bool:
        return self._table.get(keys.follow(author_id, follower_id), consistent=True) is not None

    def posts_since(self, author_id: str, since: str, limit: int | None) -> list[FeedEntry]:
        # The index is eventual (GSIs are): a post of the last moment may be missing (data model, decision 124).
        found: list[FeedEntry] = []
        start: dict[str, Any] | None = None
        while limit is None or len(found) < limit:
            response = self._table.query(
                keys.POSTS_BY_AUTHOR,
                keys.user_partition(author_id),
                where=lambda sk: sk.gte(since),
                forward=False,
                limit=None if limit is None else limit - len(found),
                start=start,
            )
            found += [items.feed_entry_from(dynamo.deserialize(raw)) for raw in response["Items"]]
            if "LastEvaluatedKey" not in response:
                break
            start = dict(response["LastEvaluatedKey"])
        return found

    def fanned_out(self, entries: Sequence[FeedEntry]) -> list[FeedEntry]:
        posts = self._table.get_many([keys.post(e.post_id) for e in entries], ("post_id", "delivery"), consistent=True)
        fanned = {post["post_id"] for post in posts if post.get("delivery", Delivery.FANOUT) == Delivery.FANOUT}
        return [entry for entry in entries if entry.post_id in fanned]

    def put_feed(self, follower_id: str, entries: Sequence[FeedEntry]) -> None:
        self._write(
            [{"PutRequest": {"Item": dynamo.serialize(items.feed_entry_item(follower_id, e))}} for e in entries]
        )

    def delete_feed(self, follower_id: str, entries: Sequence[FeedEntry]) -> None:
        self._write(
            [
                {"DeleteRequest": {"Key": dynamo.serialize(keys.feed_entry(follower_id, e.created_at, e.post_id))}}
                for e in entries
            ]
        )

    def _write(self, requests: Sequence["WriteRequestTypeDef"]) -> None:
        batch_writes.write_all(self._table.client, self._table.name, requests, sleep=self._sleep)


# -- the stream's side ---------------------------------------------------------------------------

_ACTIONS = {streams.ChangeKind.INSERT: FanoutAction.ADD, streams.ChangeKind.REMOVE: FanoutAction.REMOVE}


def fanout_task(change: streams.ItemChange) -> FanoutTask | None:
    """The first task of a post written or removed; None for a MODIFY (posts are immutable: it is a
    counter changing) and for a pulled post (followers merge it at read time). A redelivered record
    queues its task again: the worker writes the same keys."""
    action = _ACTIONS.get(change.kind)
    if action is None:
        return None
    post = items.post_from(change.image or {})
    return FanoutTask(action=action, entry=items.entry_of(post)) if post.delivery is Delivery.FANOUT else None
