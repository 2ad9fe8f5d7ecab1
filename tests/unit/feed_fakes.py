"""The ``Feed`` port in memory, with FeedRepository's observable semantics.

tests/integration/test_feed_contract.py runs the same scenarios against both so the fake cannot drift
from the DynamoDB-backed original.
"""

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from shopfeed.feed import items
from shopfeed.feed.models import Delivery, FeedEntry, Follow, Post, PostSummary, Profile
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.errors import AlreadyExists, IdempotencyKeyReused, NotFound, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.models import Page


def _newest_first(at: str, ident: str) -> str:
    return f"{at}#{ident}"


class InMemoryFeed:
    """Every write checks everything before it changes anything, as one DynamoDB transaction would.

    The fanout worker is out of this port: ``fan_out`` stands in for it, writing one entry per current
    follower of a fanned-out post.
    """

    def __init__(self, cursors: CursorCodec | None = None) -> None:
        self._cursors = cursors or CursorCodec(b"in-memory-feed")
        self._profiles: dict[str, Profile] = {}
        self._handles: dict[str, str] = {}
        self._posts: dict[str, Post] = {}
        self._follows: dict[tuple[str, str], Follow] = {}
        self._entries: dict[str, dict[str, FeedEntry]] = {}
        self._keys: dict[tuple[str, str], tuple[str, str]] = {}

    # -- stand-in for the fanout worker --------------------------------------------------------------

    def fan_out(self, post: Post) -> None:
        for follow in self._follows.values():
            if follow.followee_id == post.author_id:
                entry = items.entry_of(post)
                self._entries.setdefault(follow.follower_id, {})[_newest_first(post.created_at, post.post_id)] = entry

    def feed_entries(self, user_id: str) -> list[FeedEntry]:
        return list(self._entries.get(user_id, {}).values())

    # -- profiles ------------------------------------------------------------------------------------

    def add_profile(self, profile: Profile) -> None:
        if profile.user_id in self._profiles:
            raise AlreadyExists("user", profile.user_id)
        if profile.handle in self._handles:
            raise AlreadyExists("handle", profile.handle)
        self._profiles[profile.user_id] = profile
        self._handles[profile.handle] = profile.user_id

    def get_profile(self, user_id: str) -> Profile | None:
        return self._profiles.get(user_id)

    def handle_owner(self, handle: str) -> str | None:
        return self._handles.get(handle.lower())

    def update_profile(self, user_id: str, expected_version: int, changes: dict[str, Any], now: str) -> Profile:
        current = self._profiles.get(user_id)
        if current is None:
            raise NotFound("user", user_id)
        if current.version != expected_version:
            raise StaleVersion("user", user_id, current.version)
        updated = Profile.model_validate(
            {**current.model_dump(), **changes, "version": current.version + 1, "updated_at": now}
        )
        self._profiles[user_id] = updated
        return updated

    def count_followers(self, user_id: str, delta: int) -> None:
        """What the counters consumer does to a profile (tests use it to make celebrities)."""
        profile = self._profiles[user_id]
        self._profiles[user_id] = profile.model_copy(update={"followers_count": profile.followers_count + delta})

    # -- posts ---------------------------------------------------------------------------------------

    def add_post(self, post: Post, request: IdempotentRequest, now: datetime) -> Created[Post]:
        replayed = self._replay(request)
        if replayed:
            return replayed
        self._posts[post.post_id] = post
        self._keys[(request.user_id, request.key)] = (request.fingerprint, post.model_dump_json())
        return Created(post)

    def get_post(self, post_id: str) -> Post | None:
        return self._posts.get(post_id)

    def delete_post(self, post: Post) -> None:
        if self._posts.pop(post.post_id, None) is None:
            raise NotFound("post", post.post_id)

    def list_posts_of_author(self, author_id: str, limit: int, cursor: str | None) -> Page[PostSummary]:
        posts = [p for p in self._posts.values() if p.author_id == author_id]
        return self._page(f"posts-by-author:{author_id}", posts, _post_position, items.summary_of, limit, cursor)

    def list_posts_with_tag(self, tag: str, limit: int, cursor: str | None) -> Page[PostSummary]:
        posts = [p for p in self._posts.values() if tag in p.tags]
        return self._page(f"posts-by-tag:{tag}", posts, _post_position, items.summary_of, limit, cursor)

    # -- follows -------------------------------------------------------------------------------------

    def add_follow(self, follow: Follow) -> tuple[Follow, bool]:
        for user_id in (follow.followee_id, follow.follower_id):
            if user_id not in self._profiles:
                raise NotFound("user", user_id)
        existing = self._follows.get((follow.followee_id, follow.follower_id))
        if existing:
            return existing, False
        self._follows[(follow.followee_id, follow.follower_id)] = follow
        return follow, True

    def remove_follow(self, followee_id: str, follower_id: str) -> bool:
        return self._follows.pop((followee_id, follower_id), None) is not None

    def list_followers(self, user_id: str, limit: int, cursor: str | None) -> Page[Follow]:
        edges = [f for f in self._follows.values() if f.followee_id == user_id]
        return self._page(
            f"followers:{user_id}", edges, lambda f: _newest_first(f.followed_at, f.follower_id), _same, limit, cursor
        )

    def list_following(self, user_id: str, limit: int, cursor: str | None) -> Page[Follow]:
        edges = [f for f in self._follows.values() if f.follower_id == user_id]
        return self._page(
            f"following:{user_id}", edges, lambda f: _newest_first(f.followed_at, f.followee_id), _same, limit, cursor
        )

    # -- home feed -----------------------------------------------------------------------------------

    def home_feed(self, user_id: str, limit: int, cursor: str | None) -> Page[Post]:
        """Fanned-out entries plus the pulled posts of followed authors, newest first; entries of
        deleted posts are skipped, as the repository skips posts it cannot read."""
        followed = {f.followee_id for f in self._follows.values() if f.follower_id == user_id}
        entries = {e.post_id for e in self.feed_entries(user_id)}
        posts = [
            p
            for p in self._posts.values()
            if p.post_id in entries or (p.delivery is Delivery.PULL and p.author_id in followed)
        ]
        return self._page(f"home-feed:{user_id}", posts, _post_position, _same, limit, cursor)

    # -- building blocks -----------------------------------------------------------------------------

    def _replay(self, request: IdempotentRequest) -> Created[Post] | None:
        record = self._keys.get((request.user_id, request.key))
        if record is None:
            return None
        fingerprint, stored = record
        if fingerprint != request.fingerprint:
            raise IdempotencyKeyReused(request.key)
        return Created(Post.model_validate_json(stored), replayed=True)

    def _page[R, V](
        self,
        scope: str,
        rows: Sequence[R],
        position: Callable[[R], str],
        view: Callable[[R], V],
        limit: int,
        cursor: str | None,
    ) -> Page[V]:
        """Newest first by ``position``; the cursor holds the position of the last row served."""
        after = self._cursors.decode(scope, cursor)
        ordered = sorted(rows, key=position, reverse=True)
        if after is not None:
            ordered = [r for r in ordered if position(r) < after]
        page = ordered[:limit]
        next_cursor = self._cursors.encode(scope, position(page[-1])) if len(ordered) > limit else None
        return Page(items=[view(r) for r in page], next_cursor=next_cursor)


def _post_position(post: Post) -> str:
    return _newest_first(post.created_at, post.post_id)


def _same[T](value: T) -> T:
    return value
