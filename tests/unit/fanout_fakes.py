"""In-memory implementation of the fanout store (FanoutStore), for unit tests (the queue: queue_fakes).

tests/integration/test_fanout_worker.py runs the worker against the moto-backed FanoutRepository and
the SQS queue, so these fakes cannot drift from the real adapters on what the tests observe.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shopfeed.feed.home.fanout import FollowerPage
from shopfeed.feed.models import FeedEntry


@dataclass
class InMemoryFanout:
    """Posts, follower lists and feed entries. Pages are positions in the follower list, as text."""

    posts: set[str] = field(default_factory=set)
    audience: dict[str, list[str]] = field(default_factory=dict)  # author -> followers
    entries: dict[tuple[str, str], FeedEntry] = field(default_factory=dict)  # (follower, post) -> entry
    entry_writes: int = 0
    # Runs after each add_entries: lets a test delete the post while a page is being written.
    after_add: Callable[[], None] = lambda: None

    def followers(self, author_id: str, page: str | None, limit: int) -> FollowerPage:
        everyone = self.audience.get(author_id, [])
        start = int(page or 0)
        end = start + limit
        return FollowerPage(everyone[start:end], str(end) if end < len(everyone) else None)

    def followers_between(self, author_id: str, first: str, last: str) -> set[str]:
        return {f for f in self.audience.get(author_id, []) if first <= f <= last}

    def post_exists(self, post_id: str) -> bool:
        return post_id in self.posts

    def add_entries(self, entry: FeedEntry, followers: Sequence[str]) -> None:
        for follower in followers:
            self.entries[(follower, entry.post_id)] = entry
            self.entry_writes += 1
        self.after_add()

    def remove_entries(self, entry: FeedEntry, followers: Sequence[str]) -> None:
        for follower in followers:
            self.entries.pop((follower, entry.post_id), None)

    def feed_of(self, post_id: str) -> list[str]:
        """Followers whose feed holds the post's entry."""
        return sorted(follower for follower, post in self.entries if post == post_id)


@dataclass
class InMemoryFollowFeed:
    """Follow edges, an author's posts (with their delivery) and feed entries, for ``home.backfill``."""

    edges: set[tuple[str, str]] = field(default_factory=set)  # (author, follower)
    posts: dict[str, tuple[FeedEntry, bool]] = field(default_factory=dict)  # post id -> (entry, fanned out)
    feeds: dict[str, dict[str, FeedEntry]] = field(default_factory=dict)  # follower -> post id -> entry
    # Runs after each write of some entries: lets a test change the edge while a task writes.
    after_write: Callable[[], None] = lambda: None

    def is_following(self, author_id: str, follower_id: str) -> bool:
        return (author_id, follower_id) in self.edges

    def posts_since(self, author_id: str, since: str, limit: int | None) -> list[FeedEntry]:
        mine = [e for e, _ in self.posts.values() if e.author_id == author_id and e.created_at >= since]
        return sorted(mine, key=lambda e: e.created_at, reverse=True)[:limit]

    def fanned_out(self, entries: Sequence[FeedEntry]) -> list[FeedEntry]:
        return [e for e in entries if e.post_id in self.posts and self.posts[e.post_id][1]]

    def put_feed(self, follower_id: str, entries: Sequence[FeedEntry]) -> None:
        self.feeds.setdefault(follower_id, {}).update({e.post_id: e for e in entries})
        if entries:
            self.after_write()

    def delete_feed(self, follower_id: str, entries: Sequence[FeedEntry]) -> None:
        for entry in entries:
            self.feeds.get(follower_id, {}).pop(entry.post_id, None)
        if entries:
            self.after_write()

    def feed_of(self, follower_id: str) -> list[str]:
        """The post ids in the follower's feed, newest first."""
        held = self.feeds.get(follower_id, {}).values()
        return [e.post_id for e in sorted(held, key=lambda e: e.created_at, reverse=True)]
