"""FeedTable stream handlers of likes, comments, follows' notifications and the monthly leaderboard.

Routed with posts and follows (``handle`` calls ``feed.stream.count_and_fan_out`` for those), so one
call per batch sees every record type. Each effect is idempotent under redelivery:

- **Post counters** (``likes_count``, ``comments_count``): ``platform.counters``, one write per post
  per batch, exact. A like or comment removed after its post is gone counts nothing (the post's
  write is refused and dropped: there is nothing left to count on).
- **Notifications** have ids derived from what caused them (a deterministic ULID: the cause's time,
  then a hash of its key), and are put only if absent, so a redelivered record makes no second one
  and never brings a read one back into the unread index. A follow and a comment notify once each.
  Likes collapse: one notification per post per hour (its id comes from the post and the hour) with
  a ``count`` kept by ``platform.counters``; so a like storm makes at most 24 notifications a day per
  post. Liking or commenting on your own post notifies nobody.
- **Leaderboard**: a follow adds 1 to ``gained`` of its followee in the month of ``followed_at``, its
  removal takes it back from that month; so a month counts the followers gained in it who still
  follow. Counted with ``platform.counters`` (created on first count), write-sharded by author.
- **A deleted post's likes and comments** are removed (one Query per page of its partition, then
  BatchWriteItem deletes); they are unreachable from the API as soon as the post is gone.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

from shopfeed.feed import items, keys, stream
from shopfeed.feed.models import Comment, Follow, Like, Notification, NotificationKind
from shopfeed.feed.settings import FeedSettings
from shopfeed.platform import batch_writes, clients, counters, dynamo, exactly_once, streams
from shopfeed.platform.clock import derived_id, iso, utc_now
from shopfeed.platform.config import settings
from shopfeed.platform.counters import Increment
from shopfeed.platform.dynamo import BASE_TABLE
from shopfeed.platform.observability import logger, metrics

_SIGNS = {streams.ChangeKind.INSERT: 1, streams.ChangeKind.REMOVE: -1}


def _hour_of(at: str) -> str:
    moment = datetime.fromisoformat(at).astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return iso(moment)


def like_notification(like: Like) -> Notification:
    hour = _hour_of(like.liked_at)
    return Notification(
        notification_id=derived_id(hour, f"likes|{like.post_id}|{hour}"),
        user_id=like.post_author_id,
        kind=NotificationKind.LIKES,
        actor_id=like.user_id,
        post_id=like.post_id,
        count=0,  # counted by the stream consumer, exactly once per like
        created_at=hour,
    )


def comment_notification(comment: Comment) -> Notification:
    return Notification(
        notification_id=derived_id(comment.created_at, f"comment|{comment.post_id}|{comment.comment_id}"),
        user_id=comment.post_author_id,
        kind=NotificationKind.COMMENT,
        actor_id=comment.author_id,
        post_id=comment.post_id,
        comment_id=comment.comment_id,
        created_at=comment.created_at,
    )


def follow_notification(follow: Follow) -> Notification:
    cause = f"follow|{follow.followee_id}|{follow.follower_id}|{follow.followed_at}"
    return Notification(
        notification_id=derived_id(follow.followed_at, cause),
        user_id=follow.followee_id,
        kind=NotificationKind.FOLLOW,
        actor_id=follow.follower_id,
        created_at=follow.followed_at,
    )


def notification_of(change: streams.ItemChange) -> Notification | None:
    """What a new like, comment or follow notifies; None for anything else and for your own post."""
    if change.kind is not streams.ChangeKind.INSERT:
        return None
    image = change.new_image or {}
    if change.entity_type == items.LIKE:
        like = items.like_from(image)
        return like_notification(like) if like.user_id != like.post_author_id else None
    if change.entity_type == items.COMMENT:
        comment = items.comment_from(image)
        return comment_notification(comment) if comment.author_id != comment.post_author_id else None
    if change.entity_type == items.FOLLOW:
        return follow_notification(items.follow_from(image))
    return None


def counted_on_posts(change: streams.ItemChange) -> list[Increment]:
    """A like or a comment counts on its post; its removal takes it back. A like also counts on the
    hour's collapsed notification of the post's author (likes received, never taken back)."""
    sign = _SIGNS.get(change.kind)
    if sign is None:
        return []
    if change.entity_type == items.LIKE:
        like = items.like_from(change.image or {})
        counted = [Increment(keys.post(like.post_id), items.LIKES_COUNT, sign)]
        notification = notification_of(change)
        if notification is not None:
            notice = keys.notification(notification.user_id, notification.notification_id)
            counted.append(Increment(notice, items.NOTIFICATION_COUNT, 1))
        return counted
    if change.entity_type == items.COMMENT:
        comment = items.comment_from(change.image or {})
        return [Increment(keys.post(comment.post_id), items.COMMENTS_COUNT, sign)]
    return []


def counted_on_leaderboard(change: streams.ItemChange) -> list[Increment]:
    sign = _SIGNS.get(change.kind)
    if sign is None or change.entity_type != items.FOLLOW:
        return []
    follow = items.follow_from(change.image or {})
    return [Increment(keys.leaderboard_entry(follow.followed_at[:7], follow.followee_id), items.GAINED, sign)]


def _mark(target: str, change: streams.ItemChange) -> keys.Key:
    return keys.applied_record(target, change.sequence_number)


def _post_gone(error: Exception) -> bool:
    return (
        isinstance(error, exactly_once.EffectRefused)
        and error.reason.failed_condition
        and error.target.startswith(keys.POST)
    )


def notify(table: dynamo.Table, changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Put each notification the changes make, if absent (one PutItem per distinct notification)."""
    failures: streams.Failures = {}
    made: dict[str, Notification] = {}
    for change in changes:
        try:
            notification = notification_of(change)
        except (KeyError, ValueError) as error:
            failures[change.sequence_number] = error
            continue
        if notification is not None:
            made[notification.notification_id] = notification
    created = sum(table.put_if_absent(items.notification_item(n)) for n in made.values())
    metrics.add_metric(name="NotificationCreated", unit="Count", value=created)
    return failures


def remove_engagement(table: dynamo.Table, changes: Sequence[streams.ItemChange]) -> int:
    """Delete the likes and comments of every deleted post; how many items went."""
    removed = 0
    for change in changes:
        if change.entity_type != items.POST or change.kind is not streams.ChangeKind.REMOVE:
            continue
        post_id = keys.parse_post_id(str((change.old_image or {})["PK"]))
        start = None
        while True:
            response = table.query(BASE_TABLE, keys.post_partition(post_id), start=start, consistent=True)
            deletes = [{"DeleteRequest": {"Key": {"PK": raw["PK"], "SK": raw["SK"]}}} for raw in response["Items"]]
            if deletes:
                batch_writes.write_all(table.client, table.name, deletes)  # type: ignore[arg-type]
                removed += len(deletes)
            start = response.get("LastEvaluatedKey")
            if not start:
                break
    return removed


def social_effects(table: dynamo.Table, changes: Sequence[streams.ItemChange]) -> streams.Failures:
    now = utc_now()
    failures = notify(table, changes)
    on_posts = counters.count(table, _mark, changes, counted_on_posts, now)
    gone = [sequence_number for sequence_number, error in on_posts.items() if _post_gone(error)]
    for sequence_number in gone:
        logger.info("count dropped: its post is gone", sequence_number=sequence_number)
        del on_posts[sequence_number]
    on_board = counters.count(table, _mark, changes, counted_on_leaderboard, now, must_exist=False)
    remove_engagement(table, changes)
    return {**on_posts, **on_board, **failures}


def handle(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """The feed stream's one handler: posts and follows (part 1), then likes, comments,
    notifications, the leaderboard and the clean-up of deleted posts."""
    core = [change for change in changes if change.entity_type in (items.POST, items.FOLLOW)]
    failures = stream.count_and_fan_out(core) if core else {}
    table = dynamo.Table(clients.dynamodb(), settings(FeedSettings).feed_table_name)
    social = social_effects(table, changes)
    for sequence_number, error in social.items():
        logger.warning("social effect failed", sequence_number=sequence_number, error=str(error))
    return {**social, **failures}
