"""Stored item shapes of FeedTable and their explicit mapping to and from domain models. Every item
takes its index keys from the declarations in ``keys`` (``indexed``), never spelled here.

``entity_type`` is written on every item: the feed stream consumer routes on it (and its ESM filters
match on it), so its values are a persisted contract and never change.
"""

from datetime import datetime, timedelta
from typing import Any, Final

from shopfeed.feed import keys
from shopfeed.feed.models import (
    Comment,
    FeedEntry,
    Follow,
    LeaderboardEntry,
    Like,
    Notification,
    Post,
    PostSummary,
    Profile,
    PullAuthor,
)
from shopfeed.platform.dynamo import TTL_ATTRIBUTE, indexed

PROFILE: Final = "Profile"
HANDLE_GUARD: Final = "HandleGuard"
FOLLOW: Final = "Follow"
POST: Final = "Post"
POST_TAG: Final = "PostTag"
FEED_ENTRY: Final = "FeedEntry"
PULL_AUTHOR: Final = "PullAuthor"

# Counter attributes, maintained by the feed stream consumer (ADD, never a read-modify-write).
FOLLOWERS_COUNT: Final = "followers_count"
FOLLOWING_COUNT: Final = "following_count"
POSTS_COUNT: Final = "posts_count"
LIKES_COUNT: Final = "likes_count"
COMMENTS_COUNT: Final = "comments_count"

# TTL attribute of the table. Feed entries and the pull-author registry keep a post reachable from a
# follower's home feed for this long after it was posted.
EXPIRES_AT: Final = TTL_ATTRIBUTE
FEED_RETENTION: Final = timedelta(days=30)


Item = dict[str, Any]


def _epoch(iso_time: str) -> int:
    return int(datetime.fromisoformat(iso_time).timestamp())


def _expires(iso_time: str) -> int:
    return _epoch(iso_time) + int(FEED_RETENTION.total_seconds())


def _pick(item: Item, names: tuple[str, ...] | Any) -> Item:
    return {name: item[name] for name in names if name in item}


# -- profiles ------------------------------------------------------------------------------------


def profile_item(profile: Profile) -> Item:
    return {**keys.profile(profile.user_id), "entity_type": PROFILE, **profile.model_dump()}


def handle_guard_item(profile: Profile) -> Item:
    return {**keys.handle_guard(profile.handle), "entity_type": HANDLE_GUARD, "user_id": profile.user_id}


def profile_from(item: Item) -> Profile:
    return Profile.model_validate(_pick(item, Profile.model_fields))


# -- follows -------------------------------------------------------------------------------------


def follow_item(follow: Follow) -> Item:
    return indexed(
        keys.INDEXES,
        {**keys.follow(follow.followee_id, follow.follower_id), "entity_type": FOLLOW, **follow.model_dump()},
    )


def follow_from(item: Item) -> Follow:
    return Follow.model_validate(_pick(item, keys.FOLLOW_ATTRIBUTES))


# -- posts and tags ------------------------------------------------------------------------------


def post_item(post: Post) -> Item:
    return indexed(keys.INDEXES, {**keys.post(post.post_id), "entity_type": POST, **post.model_dump(mode="json")})


def post_tag_item(post: Post, tag: str) -> Item:
    return indexed(
        keys.INDEXES,
        {
            **keys.post_tag(post.post_id, tag),
            "entity_type": POST_TAG,
            "tag": tag,
            **post.model_dump(mode="json", include=set(keys.POST_SUMMARY_ATTRIBUTES)),
        },
    )


def post_from(item: Item) -> Post:
    return Post.model_validate(_pick(item, Post.model_fields))


def post_summary_from(item: Item) -> PostSummary:
    return PostSummary.model_validate(_pick(item, keys.POST_SUMMARY_ATTRIBUTES))


def summary_of(post: Post) -> PostSummary:
    return PostSummary.model_validate(post.model_dump(include=set(keys.POST_SUMMARY_ATTRIBUTES)))


# -- home feeds ----------------------------------------------------------------------------------


def entry_of(post: Post) -> FeedEntry:
    return FeedEntry(post_id=post.post_id, author_id=post.author_id, created_at=post.created_at)


def feed_entry_item(follower_id: str, entry: FeedEntry) -> Item:
    """Deterministic: the same post and follower always make the same item, so a redelivered fanout
    message rewrites identical items."""
    return {
        **keys.feed_entry(follower_id, entry.created_at, entry.post_id),
        "entity_type": FEED_ENTRY,
        **entry.model_dump(),
        EXPIRES_AT: _expires(entry.created_at),
    }


def feed_entry_from(item: Item) -> FeedEntry:
    return FeedEntry.model_validate(_pick(item, keys.FEED_ENTRY_ATTRIBUTES))


def pull_author_item(author: PullAuthor) -> Item:
    return {
        **keys.pull_author(author.author_id),
        "entity_type": PULL_AUTHOR,
        **author.model_dump(),
        EXPIRES_AT: _expires(author.last_pull_post_at),
    }


def pull_author_from(item: Item) -> PullAuthor:
    return PullAuthor.model_validate(_pick(item, PullAuthor.model_fields))


# -- likes, comments, notifications, leaderboard ----------------------------------------------------

LIKE: Final = "Like"
COMMENT: Final = "Comment"
NOTIFICATION: Final = "Notification"
LEADERBOARD_ENTRY: Final = "LeaderboardEntry"

GAINED: Final = "gained"  # followers an author gained in a month (leaderboard counter)
NOTIFICATION_COUNT: Final = "count"  # likes collapsed into one notification
# A read notification stays listed in "all" this long, then TTL removes it.
READ_RETENTION: Final = timedelta(days=30)


def read_expiry(read_at: str) -> int:
    return _epoch(read_at) + int(READ_RETENTION.total_seconds())


def like_item(like: Like) -> Item:
    return indexed(keys.INDEXES, {**keys.like(like.post_id, like.user_id), "entity_type": LIKE, **like.model_dump()})


def like_from(item: Item) -> Like:
    return Like.model_validate(_pick(item, keys.LIKE_ATTRIBUTES))


def comment_item(comment: Comment) -> Item:
    return indexed(
        keys.INDEXES,
        {**keys.comment(comment.post_id, comment.comment_id), "entity_type": COMMENT, **comment.model_dump()},
    )


def comment_from(item: Item) -> Comment:
    return Comment.model_validate(_pick(item, Comment.model_fields))


def notification_item(notification: Notification) -> Item:
    """An unread notification carries the sparse UnreadByUser keys; marking it read removes them."""
    item = {
        **keys.notification(notification.user_id, notification.notification_id),
        "entity_type": NOTIFICATION,
        **notification.model_dump(mode="json", exclude_none=True),
    }
    return indexed(keys.INDEXES, item)


def notification_from(item: Item) -> Notification:
    return Notification.model_validate(_pick(item, keys.NOTIFICATION_ATTRIBUTES))


def leaderboard_entry_from(item: Item) -> LeaderboardEntry:
    return LeaderboardEntry(author_id=keys.parse_user_id(item["SK"]), gained=int(item[GAINED]))
