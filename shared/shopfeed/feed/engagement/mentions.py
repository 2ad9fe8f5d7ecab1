"""Mentions: ``@handle`` in a new post or comment notifies the user who holds that handle.

Through the same pipeline as likes and follows: the stream consumer makes the notifications and puts
them if absent, with ids derived from their cause (the post or comment and the mentioned user), so a
redelivered record makes none again and never brings a read one back. A text names at most
MAX_MENTIONS distinct handles (more are ignored, so a post cannot notify a crowd); handles resolve
through the unique-handle guards (one BatchGetItem of ≤ 10 keys); a handle nobody holds, and the
author's own, notify nobody. A handle written twice in one text notifies once.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from shopfeed.feed import items, keys
from shopfeed.feed.models import Notification, NotificationKind
from shopfeed.platform import dynamo, streams
from shopfeed.platform.clock import derived_id
from shopfeed.platform.observability import metrics

MAX_MENTIONS: Final = 10
# A handle as registration takes it ([a-z0-9_]{3,30}, case-insensitive), after an "@" that does not
# continue a word (an e-mail address mentions nobody) and before anything that could continue it.
_MENTION: Final = re.compile(r"(?<![A-Za-z0-9_@])@([A-Za-z0-9_]{3,30})(?![A-Za-z0-9_@])")


def mentioned_handles(text: str) -> list[str]:
    """The distinct handles ``text`` mentions, lower-cased, in order of first mention, at most MAX_MENTIONS."""
    handles = dict.fromkeys(match.lower() for match in _MENTION.findall(text))
    return list(handles)[:MAX_MENTIONS]


@dataclass(frozen=True)
class Mentioning:
    """A new post or comment that mentions handles: what its notifications need."""

    author_id: str
    post_id: str
    comment_id: str | None
    created_at: str
    handles: list[str]

    @property
    def cause(self) -> str:
        return f"comment|{self.comment_id}" if self.comment_id else f"post|{self.post_id}"


def mentioning(change: streams.ItemChange) -> Mentioning | None:
    """The mentions of a new post or comment; None for anything else, and for a text mentioning nobody."""
    if change.kind is not streams.ChangeKind.INSERT:
        return None
    image = change.new_image or {}
    if change.entity_type == items.POST:
        post = items.post_from(image)
        made = Mentioning(post.author_id, post.post_id, None, post.created_at, mentioned_handles(post.text))
    elif change.entity_type == items.COMMENT:
        comment = items.comment_from(image)
        made = Mentioning(
            comment.author_id,
            comment.post_id,
            comment.comment_id,
            comment.created_at,
            mentioned_handles(comment.text),
        )
    else:
        return None
    return made if made.handles else None


def mention_notification(mention: Mentioning, user_id: str) -> Notification:
    return Notification(
        notification_id=derived_id(mention.created_at, f"mention|{mention.cause}|{user_id}"),
        user_id=user_id,
        kind=NotificationKind.MENTION,
        actor_id=mention.author_id,
        post_id=mention.post_id,
        comment_id=mention.comment_id,
        created_at=mention.created_at,
    )


def put_mention_notifications(table: dynamo.Table, changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Put a notification for each user a new post or comment mentions, if absent: one BatchGetItem of
    the handle guards per mentioning record, one PutItem per notification. The records whose image
    could not be read fail on their own."""
    made, failures = streams.made_of(changes, mentioning)
    created = 0
    for mention in made.values():
        guards = table.get_many([keys.handle_guard(handle) for handle in mention.handles], ("user_id",))
        mentioned = {str(guard["user_id"]) for guard in guards} - {mention.author_id}
        created += sum(
            table.put_if_absent(items.notification_item(mention_notification(mention, user_id)))
            for user_id in sorted(mentioned)
        )
    metrics.add_metric(name="MentionNotificationCreated", unit="Count", value=created)
    return failures
