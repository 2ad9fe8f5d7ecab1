"""Notifications the stream makes of new likes, comments and follows, each exactly once.

Notification ids are derived from what caused them (a deterministic ULID: the cause's time, then a
hash of its key), and a notification is put only if absent, so a redelivered record makes no second
one and never brings a read one back into the unread index. A comment notifies once. Likes collapse:
one notification per post per hour (its id comes from the post and the hour) with a ``count`` kept by
``platform.counters``; so a like storm makes at most 24 notifications a day per post. Follows collapse
the same way, per follower and followee per hour: following and unfollowing ten times makes one.
Liking or commenting on your own post notifies nobody.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

from shopfeed.feed import items, keys
from shopfeed.feed.models import Comment, Follow, Like, Notification, NotificationKind
from shopfeed.platform import dynamo, streams
from shopfeed.platform.clock import derived_id, iso
from shopfeed.platform.counters import Increment
from shopfeed.platform.observability import metrics


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
    hour = _hour_of(follow.followed_at)
    return Notification(
        notification_id=derived_id(hour, f"follow|{follow.followee_id}|{follow.follower_id}|{hour}"),
        user_id=follow.followee_id,
        kind=NotificationKind.FOLLOW,
        actor_id=follow.follower_id,
        created_at=hour,
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


def counted_on_notifications(change: streams.ItemChange) -> list[Increment]:
    """A new like counts on the hour's collapsed notification of the post's author (likes received,
    never taken back); nothing else counts on a notification."""
    notification = notification_of(change)
    if notification is None or notification.kind is not NotificationKind.LIKES:
        return []
    return [
        Increment(keys.notification(notification.user_id, notification.notification_id), items.NOTIFICATION_COUNT, 1)
    ]


def put_notifications(table: dynamo.Table, changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Put each notification the changes make, if absent (one PutItem per distinct notification); the
    records whose image could not be read."""
    made, failures = streams.made_of(changes, notification_of)
    # Likes of one post, or follows of one pair, in one hour make one notification: put it once.
    distinct = {notification.notification_id: notification for notification in made.values()}
    created = sum(table.put_if_absent(items.notification_item(n)) for n in distinct.values())
    metrics.add_metric(name="NotificationCreated", unit="Count", value=created)
    return failures
