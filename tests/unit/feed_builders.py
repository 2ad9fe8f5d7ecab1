"""Feed domain objects for tests, valid by default: each test states only what it is about."""

from datetime import datetime, timedelta

from shopfeed.feed.models import Delivery, Follow, Post, Profile
from shopfeed.platform.clock import iso, new_id
from tests.unit.builders import EARLIER, NOW


def profile(user_id: str = "U100", handle: str | None = None, followers: int = 0) -> Profile:
    at = iso(EARLIER)
    return Profile(
        user_id=user_id,
        handle=handle or f"user_{user_id.lower()}",
        display_name=f"User {user_id}",
        created_at=at,
        updated_at=at,
        version=1,
        followers_count=followers,
    )


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
        author_handle=f"user_{author_id.lower()}",  # the handle profile() gives the author
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
