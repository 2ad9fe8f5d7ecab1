"""Use cases of the feed context. No HTTP, no stream records: callers pass plain values in."""

from datetime import datetime
from typing import Protocol

from shopfeed.feed.media.services import keep_uploads
from shopfeed.feed.media.storage import MediaStorage
from shopfeed.feed.models import Delivery, Follow, Post, PostSummary, Profile
from shopfeed.platform.clock import iso, new_id, utc_now
from shopfeed.platform.errors import Forbidden, InvalidRequest, NotFound
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.identity import Caller
from shopfeed.platform.models import Page


class Feed(Protocol):
    """The storage port of this context (FeedRepository, or an in-memory fake in unit tests)."""

    def get_profile(self, user_id: str) -> Profile | None: ...
    def add_post(self, post: Post, request: IdempotentRequest, now: datetime) -> Created[Post]: ...
    def get_post(self, post_id: str) -> Post | None: ...
    def delete_post(self, post: Post) -> None: ...
    def add_follow(self, follow: Follow) -> tuple[Follow, bool]: ...
    def remove_follow(self, followee_id: str, follower_id: str) -> bool: ...
    def list_posts_of_author(self, author_id: str, limit: int, cursor: str | None) -> Page[PostSummary]: ...
    def list_posts_with_tag(self, tag: str, limit: int, cursor: str | None) -> Page[PostSummary]: ...
    def list_followers(self, user_id: str, limit: int, cursor: str | None) -> Page[Follow]: ...
    def list_following(self, user_id: str, limit: int, cursor: str | None) -> Page[Follow]: ...
    def home_feed(self, user_id: str, limit: int, cursor: str | None) -> Page[Post]: ...


# -- profiles -------------------------------------------------------------------------------------


def read_profile(store: Feed, user_id: str) -> Profile:
    profile = store.get_profile(user_id)
    if profile is None:
        raise NotFound("user", user_id)
    return profile


# -- posts ----------------------------------------------------------------------------------------


def delivery_for(author: Profile, celebrity_threshold: int) -> Delivery:
    """Decided once, when the post is written, and recorded on it: the fanout consumer and the home
    feed both follow the record, so an author crossing the threshold never loses or doubles a post."""
    return Delivery.PULL if author.followers_count >= celebrity_threshold else Delivery.FANOUT


def create_post(
    store: Feed,
    caller: Caller,
    request: IdempotentRequest,
    text: str,
    tags: tuple[str, ...],
    celebrity_threshold: int,
    media_ids: tuple[str, ...] = (),
    media: MediaStorage | None = None,
) -> Created[Post]:
    """Write a post and its tag items; a retry with the same Idempotency-Key answers the first post.
    The uploads it names (``media_ids``, ``media`` their bucket) are checked and kept first."""
    author = store.get_profile(caller.user_id)
    if author is None:
        raise NotFound("user", caller.user_id)  # only a registered user has a profile to post from
    if media_ids and media is None:
        raise ValueError("media ids without the media bucket")  # a programming error
    media_ref = keep_uploads(media, caller.user_id, media_ids) if media else ()
    moment = utc_now()
    post = Post(
        post_id=new_id(moment),
        author_id=caller.user_id,
        author_handle=author.handle,
        text=text,
        tags=tags,
        created_at=iso(moment),
        delivery=delivery_for(author, celebrity_threshold),
        media_ref=media_ref,
    )
    return store.add_post(post, request, moment)


def read_post(store: Feed, post_id: str) -> Post:
    post = store.get_post(post_id)
    if post is None:
        raise NotFound("post", post_id)
    return post


def delete_post(store: Feed, caller: Caller, post_id: str) -> Post:
    """Remove the post and its tag items; the stream consumer removes its feed entries."""
    post = read_post(store, post_id)
    if post.author_id != caller.user_id:
        raise Forbidden("delete another user's post")
    store.delete_post(post)
    return post


def list_posts_of_author(store: Feed, author_id: str, limit: int, cursor: str | None) -> Page[PostSummary]:
    return store.list_posts_of_author(author_id, limit, cursor)


def list_posts_with_tag(store: Feed, tag: str, limit: int, cursor: str | None) -> Page[PostSummary]:
    return store.list_posts_with_tag(tag, limit, cursor)


# -- follows --------------------------------------------------------------------------------------


def follow_user(store: Feed, caller: Caller, user_id: str) -> tuple[Follow, bool]:
    """Follow ``user_id``: the follow and whether this call created it (following twice is one edge)."""
    if user_id == caller.user_id:
        raise InvalidRequest("You cannot follow yourself.")
    return store.add_follow(Follow(follower_id=caller.user_id, followee_id=user_id, followed_at=iso(utc_now())))


def unfollow_user(store: Feed, caller: Caller, user_id: str) -> None:
    """Unfollowing someone not followed changes nothing; an unknown user is still 404."""
    if not store.remove_follow(user_id, caller.user_id):
        read_profile(store, user_id)


def list_followers(store: Feed, user_id: str, limit: int, cursor: str | None) -> Page[Follow]:
    return store.list_followers(user_id, limit, cursor)


def list_following(store: Feed, user_id: str, limit: int, cursor: str | None) -> Page[Follow]:
    return store.list_following(user_id, limit, cursor)


# -- home feed ------------------------------------------------------------------------------------


def read_home_feed(store: Feed, caller: Caller, limit: int, cursor: str | None) -> Page[Post]:
    return store.home_feed(caller.user_id, limit, cursor)
