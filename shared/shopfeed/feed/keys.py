"""Every key format of FeedTable, in one place. No other module spells a prefix.

Base table (PK / SK):
    USER#<user_id>          PROFILE                   social profile (+ followers/following/posts counters)
    HANDLE#<handle>         GUARD                     unique-handle guard (points at the user)
    USER#<followee_id>      FOLLOWER#<follower_id>    follow edge, keyed by its natural key (one per pair)
    POST#<post_id>          META                      post (+ likes/comments counters)
    POST#<post_id>          TAG#<tag>                 one item per tag of a post (feeds PostsByTag)
    FEED#<user_id>          <created_at>#<post_id>    feed entry: a followed author's post, written by fanout
    PULL_AUTHORS            USER#<author_id>          an author whose recent posts are merged at read time
    APPLIED#<target>        <epoch second>            applied set: records of that second counted on <target> (48 h)
    IDEMPOTENCY#...         REQUEST                   Idempotency-Key record (platform.idempotency)

Indexes (attribute names say which index they feed):
    PostsByAuthor        by_author_pk = USER#<author_id>      by_author_sk = <created_at>#<post_id>
    PulledPostsByAuthor  pulled_pk    = USER#<author_id>      pulled_sk    = <created_at>#<post_id>  (sparse)
    PostsByTag           by_tag_pk    = TAG#<tag>#<n>         by_tag_sk    = <created_at>#<post_id>
    FollowersByUser      followers_pk = USER#<followee_id>    followers_sk = <followed_at>#<follower_id>
    FollowingByUser      following_pk = USER#<follower_id>    following_sk = <followed_at>#<followee_id>

A feed entry's SK and the PulledPostsByAuthor sort key have the same format on purpose: the home feed
merges both by that string (FEED-003).
"""

from typing import Final

from shopfeed.feed.models import Comment, Notification
from shopfeed.platform import key_parts
from shopfeed.platform.dynamo import IndexSpec

# The shared key mechanics, under the names this module's builders call them by.
from shopfeed.platform.key_parts import index_key as _index_key
from shopfeed.platform.key_parts import newest_first as _newest_first
from shopfeed.platform.key_parts import shard as _shard

USER: Final = "USER#"
PROFILE: Final = "PROFILE"
HANDLE: Final = "HANDLE#"
GUARD: Final = "GUARD"
FOLLOWER: Final = "FOLLOWER#"
POST: Final = "POST#"
META: Final = "META"
TAG: Final = "TAG#"
FEED: Final = "FEED#"
PULL_AUTHORS: Final = "PULL_AUTHORS"
APPLIED: Final = "APPLIED#"

# Write sharding of a tag's index partition (a hot tag, see docs/data-model.md). Changing the count
# strands tag items written under the old one, so it is a constant of the data model.
TAG_SHARDS: Final = 4


# The indexes, with the only spelling of their attribute names, what they hold, how an item's keys are
# made and what they project (template.yaml declares the same; a template test compares). Items take
# their index keys from these declarations (platform.dynamo.indexed / reindexed), never by hand.
# What the lists read of each (exactly what the index projects):
POST_SUMMARY_ATTRIBUTES: Final = ("post_id", "author_id", "text", "tags", "created_at")
FEED_ENTRY_ATTRIBUTES: Final = ("post_id", "author_id", "created_at")
FOLLOW_ATTRIBUTES: Final = ("follower_id", "followee_id", "followed_at")
LIKE_ATTRIBUTES: Final = ("post_id", "user_id", "post_author_id", "liked_at")
NOTIFICATION_ATTRIBUTES: Final = tuple(Notification.model_fields)
COMMENT_ATTRIBUTES: Final = tuple(Comment.model_fields)

POSTS_BY_AUTHOR: Final = IndexSpec(
    "PostsByAuthor",
    "by_author_pk",
    "by_author_sk",
    holds=("Post",),
    reads=("author_id", "created_at", "post_id"),
    keys_of=lambda p: post_by_author(p["author_id"], p["created_at"], p["post_id"]),
    projection=POST_SUMMARY_ATTRIBUTES,
)
# Sparse: only posts delivered by the read-time merge (the author was above the celebrity threshold).
PULLED_POSTS_BY_AUTHOR: Final = IndexSpec(
    "PulledPostsByAuthor",
    "pulled_pk",
    "pulled_sk",
    holds=("Post",),
    reads=("delivery", "author_id", "created_at", "post_id"),
    keys_of=lambda p: (
        pulled_post_by_author(p["author_id"], p["created_at"], p["post_id"]) if p["delivery"] == "pull" else None
    ),
    projection=FEED_ENTRY_ATTRIBUTES,
)
POSTS_BY_TAG: Final = IndexSpec(
    "PostsByTag",
    "by_tag_pk",
    "by_tag_sk",
    holds=("PostTag",),
    reads=("tag", "created_at", "post_id"),
    keys_of=lambda t: post_by_tag(t["tag"], t["created_at"], t["post_id"]),
    projection=POST_SUMMARY_ATTRIBUTES,
)
FOLLOWERS_BY_USER: Final = IndexSpec(
    "FollowersByUser",
    "followers_pk",
    "followers_sk",
    holds=("Follow",),
    reads=("followee_id", "follower_id", "followed_at"),
    keys_of=lambda f: follower_of(f["followee_id"], f["follower_id"], f["followed_at"]),
    projection=FOLLOW_ATTRIBUTES,
)
FOLLOWING_BY_USER: Final = IndexSpec(
    "FollowingByUser",
    "following_pk",
    "following_sk",
    holds=("Follow",),
    reads=("follower_id", "followee_id", "followed_at"),
    keys_of=lambda f: followed_by(f["follower_id"], f["followee_id"], f["followed_at"]),
    projection=FOLLOW_ATTRIBUTES,
)

Key = dict[str, str]


# -- users ---------------------------------------------------------------------------------------


def user_partition(user_id: str) -> str:
    return USER + user_id


def profile(user_id: str) -> Key:
    return {"PK": user_partition(user_id), "SK": PROFILE}


def handle_guard(handle: str) -> Key:
    return {"PK": HANDLE + handle.lower(), "SK": GUARD}


# -- follows -------------------------------------------------------------------------------------


def follow(followee_id: str, follower_id: str) -> Key:
    """The edge "follower follows followee", in the followee's partition: the fanout worker pages an
    author's followers with one Query on it (``begins_with(SK, FOLLOWER#)``)."""
    return {"PK": user_partition(followee_id), "SK": FOLLOWER + follower_id}


def follower_of(followee_id: str, follower_id: str, followed_at: str) -> Key:
    return _index_key(FOLLOWERS_BY_USER, user_partition(followee_id), _newest_first(followed_at, follower_id))


def followed_by(follower_id: str, followee_id: str, followed_at: str) -> Key:
    return _index_key(FOLLOWING_BY_USER, user_partition(follower_id), _newest_first(followed_at, followee_id))


def parse_follower_id(sk: str) -> str:
    return key_parts.after_prefix(sk, FOLLOWER, "a follow edge")


# -- posts and tags ------------------------------------------------------------------------------


def post_partition(post_id: str) -> str:
    return POST + post_id


def post(post_id: str) -> Key:
    return {"PK": post_partition(post_id), "SK": META}


def post_by_author(author_id: str, created_at: str, post_id: str) -> Key:
    return _index_key(POSTS_BY_AUTHOR, user_partition(author_id), _newest_first(created_at, post_id))


def pulled_post_by_author(author_id: str, created_at: str, post_id: str) -> Key:
    """Only on posts delivered by the read-time merge (the author was above the celebrity threshold)."""
    return _index_key(PULLED_POSTS_BY_AUTHOR, user_partition(author_id), _newest_first(created_at, post_id))


def post_tag(post_id: str, tag: str) -> Key:
    """A tag item lives in its post's partition: one Query finds a post's tags when it is deleted."""
    return {"PK": post_partition(post_id), "SK": TAG + tag}


def tag_shard(post_id: str) -> int:
    return _shard(post_id, TAG_SHARDS)


def tag_partition(tag: str, shard: int) -> str:
    return f"{TAG}{tag}#{shard}"


def post_by_tag(tag: str, created_at: str, post_id: str) -> Key:
    return _index_key(POSTS_BY_TAG, tag_partition(tag, tag_shard(post_id)), _newest_first(created_at, post_id))


def parse_post_id(pk: str) -> str:
    return key_parts.after_prefix(pk, POST, "a post")


def parse_tag(sk: str) -> str:
    return key_parts.after_prefix(sk, TAG, "a tag")


# -- home feeds ----------------------------------------------------------------------------------


def feed_partition(user_id: str) -> str:
    return FEED + user_id


def feed_entry(follower_id: str, created_at: str, post_id: str) -> Key:
    """Derived from the post alone (plus the follower): a redelivered fanout writes the same key, and a
    delete computes it from the post's old image."""
    return {"PK": feed_partition(follower_id), "SK": _newest_first(created_at, post_id)}


def pull_author(author_id: str) -> Key:
    return {"PK": PULL_AUTHORS, "SK": user_partition(author_id)}


def parse_user_id(key: str) -> str:
    """The user id of a ``USER#<id>`` value (a profile's PK, a PullAuthor's SK, an index partition)."""
    return key_parts.after_prefix(key, USER, "a user")


# -- stream consumers ------------------------------------------------------------------------------


def applied_records(target: str, second: int) -> Key:
    """The applied set of ``target`` for the stream records created in ``second`` (platform.exactly_once):
    a partition per target, apart from the counted item's, written once per batch like the item."""
    return {"PK": APPLIED + target, "SK": f"{second:012d}"}


# -- likes, comments, notifications, leaderboard ----------------------------------------------------
#
#   POST#<post_id>              LIKE#<user_id>            a like, keyed by its natural key (one per user)
#   POST#<post_id>              COMMENT#<comment_id>      a comment; ULID ids sort oldest first
#   NOTIFY#<user_id>            <notification_id>         a notification; ULID ids sort newest last
#   LEADERBOARD#<YYYY-MM>#<n>   USER#<author_id>          followers an author gained in a month (shard n)
#
#   LikesByPost       likes_pk  = POST#<post_id>      likes_sk  = <liked_at>#<user_id>   (newest first)
#   UnreadByUser      unread_pk = USER#<user_id>      unread_sk = <notification_id>      (sparse: unread only)
#   AuthorsByGained   PK        = LEADERBOARD#<m>#<n> gained (N)                         (KEYS_ONLY)
#
# A like's natural key (one per user per post) cannot also sort by time: the base table holds the
# natural key, the LikesByPost index the time-sorted one (FEED-005). Likes and comments live in their
# post's partition, so deleting a post finds them with one Query (and nothing else must be spelled).

LIKE: Final = "LIKE#"
COMMENT: Final = "COMMENT#"
NOTIFY: Final = "NOTIFY#"
LEADERBOARD: Final = "LEADERBOARD#"

# Write sharding of a month's leaderboard partition: every follow of the month counts there.
LEADERBOARD_SHARDS: Final = 8

LIKES_BY_POST: Final = IndexSpec(
    "LikesByPost",
    "likes_pk",
    "likes_sk",
    holds=("Like",),
    reads=("post_id", "user_id", "liked_at"),
    keys_of=lambda like_: like_by_time(like_["post_id"], like_["user_id"], like_["liked_at"]),
    projection=LIKE_ATTRIBUTES,
)
# Sparse: a notification is listed here until it is read.
UNREAD_BY_USER: Final = IndexSpec(
    "UnreadByUser",
    "unread_pk",
    "unread_sk",
    holds=("Notification",),
    reads=("user_id", "notification_id"),
    keys_of=lambda n: unread(n["user_id"], n["notification_id"]) if not n.get("read_at") else None,
    projection=NOTIFICATION_ATTRIBUTES,
)
# KEYS_ONLY: the author is the SK, the count the index key; the leaderboard counter writes both.
AUTHORS_BY_GAINED: Final = IndexSpec("AuthorsByGained", "PK", "gained", projection=())
# A user's comments, newest first (comment ids are ULIDs: they sort by time).
COMMENTS_BY_USER: Final = IndexSpec(
    "CommentsByUser",
    "user_comments_pk",
    "user_comments_sk",
    holds=("Comment",),
    reads=("author_id", "comment_id"),
    keys_of=lambda c: {"user_comments_pk": user_partition(c["author_id"]), "user_comments_sk": c["comment_id"]},
    projection=COMMENT_ATTRIBUTES,
)


def like(post_id: str, user_id: str) -> Key:
    return {"PK": post_partition(post_id), "SK": LIKE + user_id}


def like_by_time(post_id: str, user_id: str, liked_at: str) -> Key:
    return _index_key(LIKES_BY_POST, post_partition(post_id), _newest_first(liked_at, user_id))


def comment(post_id: str, comment_id: str) -> Key:
    return {"PK": post_partition(post_id), "SK": COMMENT + comment_id}


def notification_partition(user_id: str) -> str:
    return NOTIFY + user_id


def notification(user_id: str, notification_id: str) -> Key:
    return {"PK": notification_partition(user_id), "SK": notification_id}


def unread(user_id: str, notification_id: str) -> Key:
    return _index_key(UNREAD_BY_USER, user_partition(user_id), notification_id)


def leaderboard_partition(month: str, shard: int) -> str:
    return f"{LEADERBOARD}{month}#{shard}"


def leaderboard_entry(month: str, author_id: str) -> Key:
    return {"PK": leaderboard_partition(month, _shard(author_id, LEADERBOARD_SHARDS)), "SK": user_partition(author_id)}


# Every index of FeedTable (template.yaml declares exactly these; a template test compares).
INDEXES: Final = (
    POSTS_BY_AUTHOR,
    PULLED_POSTS_BY_AUTHOR,
    POSTS_BY_TAG,
    FOLLOWERS_BY_USER,
    FOLLOWING_BY_USER,
    LIKES_BY_POST,
    UNREAD_BY_USER,
    AUTHORS_BY_GAINED,
    COMMENTS_BY_USER,
)
