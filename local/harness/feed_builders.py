"""Feed domain objects for the tests and the benchmarks, valid by default: each test states only what it is
about."""

import re
from datetime import datetime, timedelta

from local.harness.builders import EARLIER, NOW
from shopfeed.feed.models import Comment, Delivery, Follow, Post, Profile
from shopfeed.platform.clock import iso, new_id


def profile(user_id: str = "U100", handle: str | None = None, followers: int = 0) -> Profile:
    at = iso(EARLIER)
    return Profile(
        user_id=user_id,
        handle=handle or handle_of(user_id),
        display_name=f"User {user_id}",
        created_at=at,
        updated_at=at,
        version=1,
        followers_count=followers,
    )


def handle_of(user_id: str) -> str:
    """The handle the builders give a user: valid for any user id (a handle is ``[a-z0-9_]``)."""
    return "user_" + re.sub(r"[^a-z0-9_]", "_", user_id.lower())


def post(
    author_id: str = "U100",
    tags: tuple[str, ...] = ("dynamodb",),
    at: datetime = NOW,
    delivery: Delivery = Delivery.FANOUT,
    text: str = "Single-table design, one access pattern at a time.",
) -> Post:
    return Post(
        post_id=new_id(at),
        author_id=author_id,
        author_handle=handle_of(author_id),  # the handle profile() gives the author
        text=text,
        tags=tags,
        created_at=iso(at),
        delivery=delivery,
    )


def posts_every_minute(
    author_id: str, count: int, start: datetime = EARLIER, delivery: Delivery = Delivery.FANOUT
) -> list[Post]:
    """``count`` posts of ``author_id``, one a minute from ``start``, oldest first."""
    return [post(author_id, at=start + timedelta(minutes=n), delivery=delivery) for n in range(count)]


def follow(follower_id: str, followee_id: str, at: datetime = NOW) -> Follow:
    return Follow(follower_id=follower_id, followee_id=followee_id, followed_at=iso(at))


def comment(
    post: Post,
    author_id: str,
    text: str = "nice",
    comment_id: str = "01JAAAAAAAAAAAAAAAAAAAAAAA",
    at: str = "2026-05-01T10:20:00.000Z",
) -> Comment:
    return Comment(
        comment_id=comment_id,
        post_id=post.post_id,
        author_id=author_id,
        post_author_id=post.author_id,
        text=text,
        created_at=at,
    )
