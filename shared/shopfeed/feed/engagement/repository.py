"""FeedTable calls of likes, comments, notifications and the leaderboard (the API side).

Same rules as ``feed.repository``: domain models out, failed conditions turned into domain errors
here (read by transaction label), cursors owned here. Round trips are named on every method.
"""

import heapq
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from boto3.dynamodb.conditions import Attr

from shopfeed.feed import items, keys
from shopfeed.feed.models import Comment, LeaderboardEntry, Like, Notification
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.dynamo import BASE_TABLE, Transaction, Update
from shopfeed.platform.errors import NotFound
from shopfeed.platform.idempotency import Created, IdempotentRequest, Snapshot
from shopfeed.platform.models import Page
from shopfeed.platform.pagination import Reader, Source

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

_POST: Final = "post"
_LIKE: Final = "like"
_COMMENT: Final = "comment"

COMMENT_SNAPSHOT: Final = Snapshot(Comment, version=1)
LEADERBOARD_SIZE: Final = 100
# Mark-all-read works through the unread index a page at a time: one Query, then one TransactWriteItems
# of the page's updates, so a page is at most the 100 items a transaction takes.
_MARK_ALL_PAGE: Final = dynamo.MAX_TRANSACTION_ITEMS
_EXISTS: Final = Attr(dynamo.PARTITION).exists()


class EngagementRepository:
    def __init__(self, table: dynamo.Table, cursors: CursorCodec) -> None:
        self._table = table
        self._pages = Reader(table, cursors)

    # -- likes (FEED-005) ------------------------------------------------------------------------

    def add_like(self, like: Like) -> tuple[Like, bool]:
        """One transaction: the post still exists, the like is put only if absent. Liking twice
        answers the first like (from CancellationReasons) and writes nothing."""
        transaction = Transaction()
        transaction.add(_POST, self._post_exists(like.post_id))
        transaction.add(_LIKE, self._table.put_op(items.like_item(like), if_absent=True))
        try:
            self._table.transact(transaction, busy=f"likes of {like.post_id}")
        except dynamo.TransactionCancelled as cancelled:
            if cancelled.failed(_POST):
                raise NotFound("post", like.post_id) from cancelled
            existing = cancelled.reason(_LIKE)
            if existing.failed_condition and existing.item is not None:
                return items.like_from(existing.item), False
            raise
        return like, True

    def remove_like(self, post_id: str, user_id: str) -> bool:
        """One DeleteItem by the natural key; whether there was a like."""
        return self._table.delete(keys.like(post_id, user_id)) is not None

    def list_likes(self, post_id: str, limit: int, cursor: str | None) -> Page[Like]:
        """One Query on LikesByPost, newest first."""
        source = Source(keys.LIKES_BY_POST, keys.post_partition(post_id))
        return self._pages.page_of(items.like_from, f"likes:{post_id}", source, limit, cursor, forward=False)

    # -- comments (FEED-006) ---------------------------------------------------------------------

    def add_comment(self, comment: Comment, request: IdempotentRequest, now: datetime) -> Created[Comment]:
        """One transaction: the post still exists, the comment, the Idempotency-Key record."""
        transaction = Transaction()
        transaction.add(_POST, self._post_exists(comment.post_id))
        transaction.add(_COMMENT, self._table.put_op(items.comment_item(comment), if_absent=True))
        busy = f"comments of {comment.post_id}"
        try:
            return idempotency.commit(self._table, transaction, request, COMMENT_SNAPSHOT, comment, now, busy)
        except dynamo.TransactionCancelled as cancelled:
            if cancelled.failed(_POST):
                raise NotFound("post", comment.post_id) from cancelled
            raise

    def get_comment(self, post_id: str, comment_id: str) -> Comment | None:
        item = self._table.get(keys.comment(post_id, comment_id))
        return items.comment_from(item) if item else None

    def delete_comment(self, post_id: str, comment_id: str) -> None:
        self._table.delete(keys.comment(post_id, comment_id))

    def list_comments(self, post_id: str, limit: int, cursor: str | None) -> Page[Comment]:
        """One Query on the post's partition, comments only, oldest first (ULIDs sort by time)."""
        source = Source(BASE_TABLE, keys.post_partition(post_id))
        return self._pages.page_of(
            items.comment_from,
            f"comments:{post_id}",
            source,
            limit,
            cursor,
            where=lambda sk: sk.begins_with(keys.COMMENT),
        )

    # -- notifications (FEED-009) ----------------------------------------------------------------

    def list_notifications(self, user_id: str, unread: bool, limit: int, cursor: str | None) -> Page[Notification]:
        """One Query, newest first: on the sparse UnreadByUser index, or on the user's partition."""
        index, partition = (
            (keys.UNREAD_BY_USER, keys.user_partition(user_id))
            if unread
            else (BASE_TABLE, keys.notification_partition(user_id))
        )
        source = Source(index, partition)
        return self._pages.page_of(
            items.notification_from,
            f"notifications:{user_id}:{'unread' if unread else 'all'}",
            source,
            limit,
            cursor,
            forward=False,
        )

    def mark_read(self, user_id: str, notification_id: str, now: str) -> Notification:
        """One UpdateItem: leaves the unread index (its keys removed), expires later by TTL. Marking a
        read one again keeps its first ``read_at``."""
        try:
            item = self._table.update(keys.notification(user_id, notification_id), _read_at(now), condition=_EXISTS)
        except dynamo.ConditionFailed as failed:
            raise NotFound("notification", notification_id) from failed
        return items.notification_from(item)

    def mark_all_read(self, user_id: str, now: str) -> int:
        """Every unread notification of the user, each as ``mark_read`` would: per 100 of them, one Query
        of the unread index and one TransactWriteItems of their updates (2 round trips for 100, where an
        UpdateItem each took 101). How many were marked."""
        marked = 0
        start: Any = None
        while True:
            response = self._table.query(
                keys.UNREAD_BY_USER, keys.user_partition(user_id), limit=_MARK_ALL_PAGE, start=start
            )
            unread = [str(dynamo.deserialize(raw)["notification_id"]) for raw in response["Items"]]
            marked += self._mark_together(user_id, unread, now)
            start = response.get("LastEvaluatedKey")
            if not start:
                return marked

    def _mark_together(self, user_id: str, notification_ids: list[str], now: str) -> int:
        """One transaction for up to 100 notifications. Each update is conditional on its item (never
        create one that expired or went since the index was read, which is eventual); if one is gone,
        the transaction is cancelled whole and sent again without it."""
        remaining = list(notification_ids)
        while remaining:
            transaction = Transaction()
            for notification_id in remaining:
                key = keys.notification(user_id, notification_id)
                transaction.add(notification_id, self._table.update_op(key, _read_at(now), condition=_EXISTS))
            try:
                self._table.transact(transaction, busy=f"notifications of {user_id}")
            except dynamo.TransactionCancelled as cancelled:
                gone = cancelled.failed_labels()
                if not gone:
                    raise
                remaining = [n for n in remaining if n not in gone]
                continue
            return len(remaining)
        return 0

    # -- leaderboard (FEED-010) ------------------------------------------------------------------

    def top_authors(self, month: str) -> list[LeaderboardEntry]:
        """One Query per write shard (LEADERBOARD_SHARDS round trips, 100 items each at most), merged."""
        best: list[LeaderboardEntry] = []
        for shard in range(keys.LEADERBOARD_SHARDS):
            response = self._table.query(
                keys.AUTHORS_BY_GAINED,
                keys.leaderboard_partition(month, shard),
                forward=False,
                limit=LEADERBOARD_SIZE,
            )
            best += [items.leaderboard_entry_from(dynamo.deserialize(raw)) for raw in response["Items"]]
        positive = (entry for entry in best if entry.gained > 0)
        return heapq.nsmallest(LEADERBOARD_SIZE, positive, key=lambda e: (-e.gained, e.author_id))

    # -- building blocks -------------------------------------------------------------------------

    def _post_exists(self, post_id: str) -> "TransactWriteItemTypeDef":
        return self._table.check_op(keys.post(post_id), _EXISTS)


def _read_at(now: str) -> Update:
    """A notification read: it leaves the sparse unread index (its keys removed) and expires by TTL;
    read again, it keeps its first ``read_at``."""
    return Update(
        set_if_absent={"read_at": now, items.EXPIRES_AT: items.read_expiry(now)},
        remove=(keys.UNREAD_BY_USER.partition_key, keys.UNREAD_BY_USER.sort_key),
    )
