"""Follow backfill and unfollow cleanup: a follower's home feed made to say what the follow edge says.

A follow (the edge's INSERT record) puts a ``backfill`` task on the fanout queue, an unfollow (its
REMOVE) a ``cleanup`` task. The fanout worker runs both the same way (``settle_follow``): it reads the
edge as it is *now* (strongly consistent) and makes the feed agree with it, whatever the task's name
says, then reads the edge again; if it changed meanwhile it goes round again. So tasks delivered
twice, late or out of order (follow, unfollow, follow) end as the last edge says:

- The last write to the edge (a follow or an unfollow at time T) makes a record, hence a task, that
  starts after T: it reads the final edge, writes its effect after T, and reads the final edge again.
- Any other task whose last round wrote the opposite effect read the edge after those writes and
  found it unchanged, so the read, and the writes before it, came before T: the final task's writes
  come after them and win.

Following (the edge exists): the author's newest ``backfill_posts`` posts of the feed's retention
window (``PostsByAuthor``, one Query) that exist and were fanned out (a strong BatchGetItem: a
celebrity's posts are merged at read time, so a celebrity needs no backfill and gets none) are put
into the follower's feed, with the keys and content fanout gives them (a redelivered task writes the
same items). Then the posts are read again: one deleted while it was written loses its entry (its
deletion's REMOVE tasks may have passed this follower already).

Not following: every post of the author that may still have an entry (the retention window, plus
the days DynamoDB's TTL may take to delete an expired one) gives the key of its entry in the
follower's feed, which is deleted (absent keys are fine). The author's posts, not the follower's
feed, give the keys: the cost follows what the author posted, not what everyone the follower reads
posted (docs/data-model.md, decision 121).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Final, Protocol

from pydantic import BaseModel, ConfigDict

from shopfeed.feed import items
from shopfeed.feed.home.fanout import SETTLE_ROUNDS, EdgesKeptChanging
from shopfeed.feed.models import FeedEntry
from shopfeed.platform import streams
from shopfeed.platform.clock import iso

# DynamoDB deletes expired items within a few days of their expiry, not at once: entries that old may
# still be in a feed, so a cleanup looks that far back.
TTL_LAG: Final = timedelta(days=7)
CLEANUP_WINDOW: Final = items.FEED_RETENTION + TTL_LAG


class FollowAction(StrEnum):
    BACKFILL = "backfill"  # the edge was written
    CLEANUP = "cleanup"  # the edge was removed


class FollowTask(BaseModel):
    """One fanout queue message: make ``follower_id``'s feed agree with their edge to ``author_id``.
    The action says which change queued it; the worker follows the edge as it finds it."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    action: FollowAction
    follower_id: str
    author_id: str


class FollowFeedStore(Protocol):
    """The FeedTable side of backfill and cleanup (FanoutRepository, or an in-memory fake)."""

    def is_following(self, author_id: str, follower_id: str) -> bool:
        """Whether the edge exists, strongly consistent."""
        ...

    def posts_since(self, author_id: str, since: str, limit: int | None) -> list[FeedEntry]:
        """The author's posts created at ``since`` or later, newest first, at most ``limit`` (all if None)."""
        ...

    def fanned_out(self, entries: Sequence[FeedEntry]) -> list[FeedEntry]:
        """Those of ``entries`` (at most 100) whose post exists and was fanned out, strongly consistent."""
        ...

    def put_feed(self, follower_id: str, entries: Sequence[FeedEntry]) -> None:
        """Put ``entries`` into the follower's feed; returns when every one is written."""
        ...

    def delete_feed(self, follower_id: str, entries: Sequence[FeedEntry]) -> None:
        """Delete ``entries`` from the follower's feed (absent ones are fine)."""
        ...


@dataclass(frozen=True)
class FollowReport:
    """What a follow task did: the edge it settled on, entries written and removed, rounds it took."""

    following: bool
    written: int = 0
    removed: int = 0
    rounds: int = 1


def settle_follow(task: FollowTask, store: FollowFeedStore, backfill_posts: int, now: datetime) -> FollowReport:
    """Make the follower's feed agree with the edge, until a read of the edge after the last write
    finds it as the writes assumed (at most SETTLE_ROUNDS; then the message fails and comes back)."""
    for round_ in range(1, SETTLE_ROUNDS + 1):
        following = store.is_following(task.author_id, task.follower_id)
        if following:
            written, removed = _backfill(task, store, backfill_posts, now)
        else:
            written, removed = 0, _clean(task, store, now)
        if store.is_following(task.author_id, task.follower_id) == following:
            return FollowReport(following, written, removed, round_)
    raise EdgesKeptChanging(task.author_id)


def _backfill(task: FollowTask, store: FollowFeedStore, limit: int, now: datetime) -> tuple[int, int]:
    if limit == 0:
        return 0, 0
    # Older posts than the retention would make entries born expired.
    recent = store.posts_since(task.author_id, iso(now - items.FEED_RETENTION), limit)
    entries = store.fanned_out(recent) if recent else []
    if not entries:
        return 0, 0
    store.put_feed(task.follower_id, entries)
    # Deleted while written: its REMOVE tasks may have passed this follower already. Deleted after this
    # read: they start after it and find the entry (the follower is in the author's edges).
    kept = store.fanned_out(entries)
    gone = [entry for entry in entries if entry not in kept]
    store.delete_feed(task.follower_id, gone)
    return len(kept), len(gone)


def _clean(task: FollowTask, store: FollowFeedStore, now: datetime) -> int:
    posts = store.posts_since(task.author_id, iso(now - CLEANUP_WINDOW), None)
    store.delete_feed(task.follower_id, posts)
    return len(posts)


# -- the stream's side ---------------------------------------------------------------------------

_ACTIONS = {streams.ChangeKind.INSERT: FollowAction.BACKFILL, streams.ChangeKind.REMOVE: FollowAction.CLEANUP}


def follow_task(change: streams.ItemChange) -> FollowTask | None:
    """The task of a follow written (backfill) or removed (cleanup). A redelivered record queues it
    again: the worker settles on the edge as it is, writing the same keys."""
    action = _ACTIONS.get(change.kind)
    if action is None:
        return None
    follow = items.follow_from(change.image or {})
    return FollowTask(action=action, follower_id=follow.follower_id, author_id=follow.followee_id)
