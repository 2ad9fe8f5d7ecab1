"""Use cases of likes, comments, notifications and the leaderboard. No HTTP, no stream records."""

from datetime import datetime
from typing import Protocol

from shopfeed.feed import services
from shopfeed.feed.models import Comment, LeaderboardEntry, Like, Notification
from shopfeed.platform.clock import iso, new_id, utc_now
from shopfeed.platform.errors import Forbidden, NotFound
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.identity import OPS, Caller
from shopfeed.platform.models import Page


class Engagement(Protocol):
    """The storage port (EngagementRepository)."""

    def add_like(self, like: Like) -> tuple[Like, bool]: ...
    def remove_like(self, post_id: str, user_id: str) -> bool: ...
    def list_likes(self, post_id: str, limit: int, cursor: str | None) -> Page[Like]: ...
    def add_comment(self, comment: Comment, request: IdempotentRequest, now: datetime) -> Created[Comment]: ...
    def get_comment(self, post_id: str, comment_id: str) -> Comment | None: ...
    def delete_comment(self, post_id: str, comment_id: str) -> None: ...
    def list_comments(self, post_id: str, limit: int, cursor: str | None) -> Page[Comment]: ...
    def list_notifications(self, user_id: str, unread: bool, limit: int, cursor: str | None) -> Page[Notification]: ...
    def mark_read(self, user_id: str, notification_id: str, now: str) -> Notification: ...
    def mark_all_read(self, user_id: str, now: str) -> int: ...
    def top_authors(self, month: str) -> list[LeaderboardEntry]: ...


# -- likes ----------------------------------------------------------------------------------------


def like_post(store: services.Feed, engagement: Engagement, caller: Caller, post_id: str) -> tuple[Like, bool]:
    """Like a post: the like and whether this call made it (one like per user per post). Two round
    trips: the post is read for its author (the notification's recipient), then the like is put in a
    transaction that checks the post again (a post deleted in between is still 404)."""
    post = services.read_post(store, post_id)
    like = Like(post_id=post_id, user_id=caller.user_id, post_author_id=post.author_id, liked_at=iso(utc_now()))
    return engagement.add_like(like)


def unlike_post(engagement: Engagement, caller: Caller, post_id: str) -> None:
    """Unliking a post not liked (or gone) changes nothing."""
    engagement.remove_like(post_id, caller.user_id)


def list_likes(
    store: services.Feed, engagement: Engagement, post_id: str, limit: int, cursor: str | None
) -> Page[Like]:
    """A deleted post's likes are unreachable at once (its items are removed later, by the stream)."""
    services.read_post(store, post_id)
    return engagement.list_likes(post_id, limit, cursor)


# -- comments -------------------------------------------------------------------------------------


def add_comment(
    store: services.Feed, engagement: Engagement, caller: Caller, request: IdempotentRequest, post_id: str, text: str
) -> Created[Comment]:
    """A retry with the same Idempotency-Key answers the first comment."""
    post = services.read_post(store, post_id)
    moment = utc_now()
    comment = Comment(
        comment_id=new_id(moment),
        post_id=post_id,
        author_id=caller.user_id,
        post_author_id=post.author_id,
        text=text,
        created_at=iso(moment),
    )
    return engagement.add_comment(comment, request, moment)


def list_comments(
    store: services.Feed, engagement: Engagement, post_id: str, limit: int, cursor: str | None
) -> Page[Comment]:
    services.read_post(store, post_id)
    return engagement.list_comments(post_id, limit, cursor)


def delete_comment(engagement: Engagement, caller: Caller, post_id: str, comment_id: str) -> None:
    """By the comment's author or the post's author (the comment carries both)."""
    comment = engagement.get_comment(post_id, comment_id)
    if comment is None:
        raise NotFound("comment", comment_id)
    if caller.user_id not in (comment.author_id, comment.post_author_id):
        raise Forbidden("delete another user's comment")
    engagement.delete_comment(post_id, comment_id)


# -- notifications --------------------------------------------------------------------------------


def list_notifications(
    engagement: Engagement, caller: Caller, unread: bool, limit: int, cursor: str | None
) -> Page[Notification]:
    return engagement.list_notifications(caller.user_id, unread, limit, cursor)


def mark_read(engagement: Engagement, caller: Caller, notification_id: str) -> Notification:
    return engagement.mark_read(caller.user_id, notification_id, iso(utc_now()))


def mark_all_read(engagement: Engagement, caller: Caller) -> int:
    return engagement.mark_all_read(caller.user_id, iso(utc_now()))


# -- leaderboard ----------------------------------------------------------------------------------


def top_authors(engagement: Engagement, caller: Caller, month: str) -> list[LeaderboardEntry]:
    caller.require(OPS, "read the leaderboard")
    return engagement.top_authors(month)
