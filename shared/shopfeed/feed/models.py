"""Domain models of the feed context: what services reason about (no keys, no HTTP)."""

import unicodedata
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Final

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints

from shopfeed.feed.media import MediaRef
from shopfeed.platform.models import Model
from shopfeed.platform.types import UserId, Version

MAX_TAGS: Final = 10
MAX_POST_LENGTH: Final = 2000
MAX_COMMENT_LENGTH: Final = 1000
MAX_DISPLAY_NAME_LENGTH: Final = 80

Handle = Annotated[
    str,
    # Lower-cased before the pattern is checked: "Ada_L" is the handle "ada_l".
    BeforeValidator(lambda raw: raw.strip().lower() if isinstance(raw, str) else raw),
    StringConstraints(min_length=3, max_length=30, pattern=r"^[a-z0-9_]+$"),
]
DisplayName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_DISPLAY_NAME_LENGTH)]
Bio = Annotated[str, StringConstraints(strip_whitespace=True, max_length=280)]
PostText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_POST_LENGTH)]
TAG_PATTERN: Final = r"^[a-z0-9_]{1,50}$"
Tag = Annotated[str, StringConstraints(pattern=TAG_PATTERN)]
# A counter the stream consumer keeps. While one of its records waits in the dead-letter queue (its
# retries ran out; the runbook redrives it), a later one may take the counter below zero: it reads
# as 0 until the redrive, never as a failed read.
Count = Annotated[int, Field(ge=0), BeforeValidator(lambda raw: max(raw, 0) if isinstance(raw, int | Decimal) else raw)]


def normalise_tag(raw: str) -> str:
    """``#DynamoDB`` → ``dynamodb``: NFKC, trimmed, one leading ``#`` dropped, lower-cased."""
    return unicodedata.normalize("NFKC", raw).strip().removeprefix("#").lower()


def _distinct(tags: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(tags))


Tags = Annotated[tuple[Tag, ...], AfterValidator(_distinct), Field(max_length=MAX_TAGS)]


class Profile(Model):
    """A user's social profile. The counters are written by the feed stream consumer, never by the API,
    and without bumping ``version``: a follow must not invalidate the ETag of a profile edit."""

    user_id: UserId
    handle: Handle
    display_name: DisplayName
    bio: Bio = ""
    created_at: str
    updated_at: str
    version: Version
    followers_count: Count = 0
    following_count: Count = 0
    posts_count: Count = 0


class Delivery(StrEnum):
    """How a post reaches its author's followers, decided once when it is written."""

    FANOUT = "fanout"  # one feed entry per follower, written by the fanout worker
    PULL = "pull"  # the author was above the celebrity threshold: followers' feeds merge it at read time


class Post(Model):
    """A post. Its text and tags never change (no route edits a post), so ``version`` stays 1: the
    search index orders writes by it (a REMOVE's tombstone at 1 refuses a late INSERT), and an edit
    route would bump it as ``PATCH /products`` does. The counters change without a new version."""

    post_id: str
    author_id: UserId
    # The author's handle as the post was written, for search. Handles never change (PATCH /users/me
    # cannot), so this copy never goes stale; None only on posts written before it was recorded.
    author_handle: Handle | None = None
    text: PostText
    tags: Tags = ()
    created_at: str
    delivery: Delivery
    # The playbook's media_ref: kept objects of the media bucket, by id (shopfeed.feed.media).
    media_ref: tuple[MediaRef, ...] = ()
    version: Version = 1
    likes_count: Count = 0
    comments_count: Count = 0


class PostSummary(Model):
    """What the post lists project (PostsByAuthor, PostsByTag): posts are immutable, so the copy on a
    tag item never goes stale. Counters change, so lists leave them out."""

    post_id: str
    author_id: UserId
    text: str
    tags: tuple[str, ...] = ()
    created_at: str


class FeedEntry(Model):
    """A post in someone's home feed: a small reference, the post itself is read with the page."""

    post_id: str
    author_id: UserId
    created_at: str


class Follow(Model):
    follower_id: UserId
    followee_id: UserId
    followed_at: str


class PullAuthor(Model):
    """An author whose posts of the feed-retention window are merged into followers' feeds at read time."""

    author_id: UserId
    last_pull_post_at: str


# -- likes, comments, notifications, leaderboard ----------------------------------------------------

CommentText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_COMMENT_LENGTH)]


class Like(Model):
    """One per user per post. ``post_author_id`` travels with it: the stream consumer notifies the
    post's author from the like's image alone (no read)."""

    post_id: str
    user_id: UserId
    post_author_id: UserId
    liked_at: str


class Comment(Model):
    comment_id: str
    post_id: str
    author_id: UserId
    post_author_id: UserId
    text: CommentText
    created_at: str


class NotificationKind(StrEnum):
    LIKES = "likes"  # likes of one post in one hour, collapsed into one notification with a count
    COMMENT = "comment"
    FOLLOW = "follow"
    MENTION = "mention"  # an @handle in a post or comment (actor: its author; comment_id set for a comment)


class Notification(Model):
    notification_id: str
    user_id: UserId  # the recipient
    kind: NotificationKind
    actor_id: UserId  # who followed, commented or mentioned; the first liker of the hour
    post_id: str | None = None
    comment_id: str | None = None
    count: Count = 1
    created_at: str
    read_at: str | None = None


class LeaderboardEntry(Model):
    author_id: UserId
    gained: int
