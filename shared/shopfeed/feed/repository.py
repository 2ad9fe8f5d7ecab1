"""FeedTable: every DynamoDB call of the feed context's API, on the platform's table gateway.

Returns domain models, never raw items; turns failed conditions and cancelled transactions into
domain errors right here, reading the reasons by label; owns the pagination cursors of its lists.
(The fanout worker and the counters consumer write feed entries and counters; see feed-keys in the
data model.)
"""

import base64
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from boto3.dynamodb.conditions import Attr

from shopfeed.feed import items, keys
from shopfeed.feed.models import Delivery, FeedEntry, Follow, Post, PostSummary, Profile, PullAuthor
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.dynamo import BASE_TABLE, Transaction
from shopfeed.platform.errors import InvalidCursor, NotFound
from shopfeed.platform.idempotency import Created, IdempotentRequest, Snapshot
from shopfeed.platform.models import Page
from shopfeed.platform.pagination import Reader, Source, merge

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

# Transaction labels: cancellation reasons are read by these, never by position.
_POST: Final = "post"
_EDGE: Final = "edge"
_FOLLOWEE: Final = "followee"
_FOLLOWER: Final = "follower"
_EXISTS: Final = Attr(dynamo.PARTITION).exists()

# The created post as its Idempotency-Key record keeps it (a replay answers it).
POST_SNAPSHOT: Final = Snapshot(Post, version=1)

# The home feed's read-time merge (FEED-003), bounded: at most this many followed celebrities are
# merged, the most recently active first (one Query each per page), among at most MAX_PULL_AUTHORS
# authors with pulled posts in the retention window (their follow edges are checked with
# BatchGetItem, 100 keys a call).
MAX_MERGED_AUTHORS: Final = 64
MAX_PULL_AUTHORS: Final = 1000
_KEYS_PER_BATCH_GET: Final = 100  # DynamoDB's limit
# What a feed page reads of a post: its model's fields, not the index keys the item also carries.
_POST_FIELDS: Final = tuple(Post.model_fields)
# A home feed cursor: the scope (its user id JSON-escaped, at most 756 characters), the merge's watermark
# (a feed sort key, under 100 characters), a hex digit per four sources and 8 characters per author, as
# base64 with the signature. The bound leaves room below the 4,096 characters the API takes.
MAX_HOME_CURSOR_LENGTH: Final = 2400
_PRINT_LENGTH: Final = 8
_GONE_PRINT: Final = "~" * _PRINT_LENGTH  # never a fingerprint (base64url has no "~")


def _is_home_position(state: Any) -> bool:
    return (
        isinstance(state, dict)
        and isinstance(state.get("a"), str)
        and len(state["a"]) % _PRINT_LENGTH == 0
        and isinstance(state.get("m"), dict)
    )


def _author_print(author_id: str) -> str:
    """48 bits of the author id's BLAKE2b digest, base64url: among the registry's at most 1,000 authors
    a collision is about one chance in 10^9 per page (and would merge one more celebrity's public posts)."""
    return base64.urlsafe_b64encode(hashlib.blake2b(author_id.encode(), digest_size=6).digest()).decode()


class FeedRepository:
    def __init__(
        self,
        table: dynamo.Table,
        cursors: CursorCodec,
        pull_authors_cache_seconds: float = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._table = table
        self._pages = Reader(table, cursors)
        self._cache_seconds = pull_authors_cache_seconds
        self._clock = clock
        self._pull_authors: tuple[float, list[PullAuthor]] | None = None

    # -- profiles ----------------------------------------------------------------------------

    def get_profile(self, user_id: str) -> Profile | None:
        item = self._table.get(keys.profile(user_id))
        return items.profile_from(item) if item else None

    # -- posts -------------------------------------------------------------------------------

    def add_post(self, post: Post, request: IdempotentRequest, now: datetime) -> Created[Post]:
        """One TransactWriteItems: the post, one item per tag, the pull-author mark of a celebrity's
        post, the Idempotency-Key record. A retry is answered from the record in CancellationReasons."""
        transaction = Transaction()
        transaction.add(_POST, self._table.put_op(items.post_item(post), if_absent=True))
        for tag in post.tags:
            transaction.add(f"tag:{tag}", self._table.put_op(items.post_tag_item(post, tag)))
        if post.delivery is Delivery.PULL:
            author = PullAuthor(author_id=post.author_id, last_pull_post_at=post.created_at)
            transaction.add("pull-author", self._table.put_op(items.pull_author_item(author)))
        return idempotency.commit(self._table, transaction, request, POST_SNAPSHOT, post, now, f"post {post.post_id}")

    def get_post(self, post_id: str) -> Post | None:
        item = self._table.get(keys.post(post_id))
        return items.post_from(item) if item else None

    def delete_post(self, post: Post) -> None:
        """The post and its tag items in one transaction (the post's tags name them: no Query).
        The stream's REMOVE of the post drives the removal of its feed entries."""
        transaction = Transaction()
        transaction.add(_POST, self._delete_op(keys.post(post.post_id), must_exist=True))
        for tag in post.tags:
            transaction.add(f"tag:{tag}", self._delete_op(keys.post_tag(post.post_id, tag)))
        try:
            self._table.transact(transaction, busy=f"post {post.post_id}")
        except dynamo.TransactionCancelled as cancelled:
            if cancelled.failed(_POST):
                raise NotFound("post", post.post_id) from cancelled
            raise

    def list_posts_of_author(self, author_id: str, limit: int, cursor: str | None) -> Page[PostSummary]:
        source = Source(keys.POSTS_BY_AUTHOR, keys.user_partition(author_id))
        return self._pages.page_of(
            items.post_summary_from, f"posts-by-author:{author_id}", source, limit, cursor, forward=False
        )

    def list_posts_with_tag(self, tag: str, limit: int, cursor: str | None) -> Page[PostSummary]:
        """Scatter-gather over the tag's write shards, merged newest first (one Query per shard)."""
        sources = [Source(keys.POSTS_BY_TAG, keys.tag_partition(tag, shard)) for shard in range(keys.TAG_SHARDS)]
        return self._pages.merged_of(items.post_summary_from, f"posts-by-tag:{tag}", sources, limit, cursor)

    # -- follows -----------------------------------------------------------------------------

    def add_follow(self, follow: Follow) -> tuple[Follow, bool]:
        """Both users must exist and the edge is put only if absent: one transaction. Following
        twice answers the first edge (from CancellationReasons, no read) and writes nothing."""
        transaction = Transaction()
        transaction.add(_FOLLOWEE, self._exists_check(keys.profile(follow.followee_id)))
        transaction.add(_FOLLOWER, self._exists_check(keys.profile(follow.follower_id)))
        transaction.add(_EDGE, self._table.put_op(items.follow_item(follow), if_absent=True))
        try:
            self._table.transact(transaction, busy=f"follows of {follow.followee_id}")
        except dynamo.TransactionCancelled as cancelled:
            if cancelled.failed(_FOLLOWEE):
                raise NotFound("user", follow.followee_id) from cancelled
            if cancelled.failed(_FOLLOWER):
                raise NotFound("user", follow.follower_id) from cancelled
            existing = cancelled.reason(_EDGE)
            if existing.failed_condition and existing.item is not None:
                return items.follow_from(existing.item), False
            raise
        return follow, True

    def remove_follow(self, followee_id: str, follower_id: str) -> bool:
        """Whether there was an edge to remove."""
        return self._table.delete(keys.follow(followee_id, follower_id)) is not None

    def list_followers(self, user_id: str, limit: int, cursor: str | None) -> Page[Follow]:
        return self._follows(f"followers:{user_id}", keys.FOLLOWERS_BY_USER, user_id, limit, cursor)

    def list_following(self, user_id: str, limit: int, cursor: str | None) -> Page[Follow]:
        return self._follows(f"following:{user_id}", keys.FOLLOWING_BY_USER, user_id, limit, cursor)

    def _follows(
        self, scope: str, index: dynamo.IndexSpec, user_id: str, limit: int, cursor: str | None
    ) -> Page[Follow]:
        source = Source(index, keys.user_partition(user_id))
        return self._pages.page_of(items.follow_from, scope, source, limit, cursor, forward=False)

    # -- home feed (FEED-003) ----------------------------------------------------------------

    def home_feed(self, user_id: str, limit: int, cursor: str | None) -> Page[Post]:
        """My feed partition merged with the pulled posts of the celebrities I follow, newest first,
        then the page's posts read in one BatchGetItem (entries are small references). Every read here is
        eventually consistent: a feed is (FEED-003), and it halves the page's read capacity.

        The celebrities are chosen on the first page and travel in the cursor as 48-bit fingerprints
        (8 characters each), found again in the pull-author registry on later pages: every page of one
        walk merges the same sources without checking follow edges again, and the cursor stays bounded
        (MAX_HOME_CURSOR_LENGTH) however long the authors' ids. A post deleted after its entry was
        listed is skipped (its entry's removal may lag behind).
        """
        scope = f"home-feed:{user_id}"
        state = self._pages.cursors.decode(scope, cursor)
        if state is None:
            authors: list[str | None] = list(self._followed_pull_authors(user_id))
            position = None
        elif _is_home_position(state):
            authors, position = self._authors_by_print(state["a"]), state["m"]
        else:
            raise InvalidCursor()
        sources = [
            Source(BASE_TABLE, keys.feed_partition(user_id)),
            *(None if a is None else Source(keys.PULLED_POSTS_BY_AUTHOR, keys.user_partition(a)) for a in authors),
        ]
        found, next_position = merge(self._table, sources, limit, position)
        posts = self._posts([items.feed_entry_from(i) for i in found])
        next_cursor = None
        if next_position is not None:
            prints = "".join(_author_print(a) if a is not None else _GONE_PRINT for a in authors)
            next_cursor = self._pages.cursors.encode(scope, {"a": prints, "m": next_position})
        return Page(items=posts, next_cursor=next_cursor)

    def _authors_by_print(self, prints: str) -> list[str | None]:
        """The authors a walk's cursor names, in its order; None for one no longer in the registry
        (no pulled post left in the window: nothing of theirs remains to merge)."""
        registered = {_author_print(a.author_id): a.author_id for a in self._recent_pull_authors()}
        return [registered.get(prints[n : n + _PRINT_LENGTH]) for n in range(0, len(prints), _PRINT_LENGTH)]

    def _followed_pull_authors(self, user_id: str) -> list[str]:
        """Authors with pulled posts in the retention window whom ``user_id`` follows, most recently
        active first, at most MAX_MERGED_AUTHORS."""
        candidates = {a.author_id: a for a in self._recent_pull_authors() if a.author_id != user_id}
        if not candidates:
            return []
        edge_keys = [keys.follow(author, user_id) for author in candidates]
        edges = [
            edge
            for start in range(0, len(edge_keys), _KEYS_PER_BATCH_GET)
            for edge in self._table.get_many(
                edge_keys[start : start + _KEYS_PER_BATCH_GET], keys.FOLLOW_ATTRIBUTES, consistent=False
            )
        ]
        followed = [candidates[items.follow_from(edge).followee_id] for edge in edges]
        followed.sort(key=lambda a: (a.last_pull_post_at, a.author_id), reverse=True)
        return [a.author_id for a in followed[:MAX_MERGED_AUTHORS]]

    def refresh_pull_authors(self) -> None:
        """Read the pull-author registry now, whatever the container kept (priming at init, and after a
        SnapStart restore). A read that fails leaves nothing kept, so the next home feed reads it."""
        self._pull_authors = None
        self._recent_pull_authors()

    def _recent_pull_authors(self) -> list[PullAuthor]:
        """The pull-author registry (one Query), kept per container for ``pull_authors_cache_seconds``:
        every first page of every home feed needs it, and its one partition must not run hot."""
        now = self._clock()
        if self._pull_authors is not None and now - self._pull_authors[0] < self._cache_seconds:
            return self._pull_authors[1]
        response = self._table.query(BASE_TABLE, keys.PULL_AUTHORS, limit=MAX_PULL_AUTHORS)
        now_s = dynamo.now_epoch()
        live = [raw for raw in response["Items"] if not dynamo.expired(raw, now_s)]
        authors = [items.pull_author_from(dynamo.deserialize(raw)) for raw in live]
        self._pull_authors = (now, authors)
        return authors

    def _posts(self, entries: Sequence[FeedEntry]) -> list[Post]:
        if not entries:
            return []
        # Eventual, as the feed is (design §2: FEED-003 is not a read-your-write): half the RCU of the page's
        # biggest read. A post deleted in the last second may still show; GET /posts/{id} stays strong.
        found = self._table.get_many([keys.post(e.post_id) for e in entries], _POST_FIELDS, consistent=False)
        by_id = {post.post_id: post for post in map(items.post_from, found)}
        return [by_id[e.post_id] for e in entries if e.post_id in by_id]

    # -- building blocks ---------------------------------------------------------------------

    def _delete_op(self, key: Mapping[str, str], must_exist: bool = False) -> "TransactWriteItemTypeDef":
        return self._table.delete_op(key, _EXISTS if must_exist else None)

    def _exists_check(self, key: Mapping[str, str]) -> "TransactWriteItemTypeDef":
        return self._table.check_op(key, _EXISTS)
