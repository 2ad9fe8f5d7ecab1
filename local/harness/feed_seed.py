"""Feed state below the API (profiles, counters, feed entries as the fanout worker writes them), and
posts published through the API and delivered as fanout would, for the integration and DynamoDB Local
tiers and the benchmarks."""

from collections.abc import Iterable
from typing import Any

from local.harness.client import ApiClient
from local.harness.feed_builders import profile
from local.harness.feed_factories import write_post
from shopfeed.feed import items, keys
from shopfeed.feed.bootstrap import feed_store
from shopfeed.feed.models import Delivery, Post
from shopfeed.feed.settings import FeedSettings
from shopfeed.platform import clients, dynamo
from shopfeed.platform.config import settings


def feed_table() -> str:
    name: str = settings(FeedSettings).feed_table_name
    return name


def register_profiles(*user_ids: str, followers: int = 0) -> None:
    """Social profiles and their handle guards, as registration writes them (the counters as the consumer
    leaves them)."""
    for user_id in user_ids:
        written = profile(user_id, followers=followers)
        for item in (items.profile_item(written), items.handle_guard_item(written)):
            clients.dynamodb().put_item(TableName=feed_table(), Item=dynamo.serialize(item))


def set_followers_count(user_id: str, count: int) -> None:
    """What the counters consumer would have left on a profile."""
    clients.dynamodb().update_item(
        TableName=feed_table(),
        Key=dynamo.serialize(keys.profile(user_id)),
        UpdateExpression="SET followers_count = :n",
        ExpressionAttributeValues={":n": dynamo.value(count)},
    )


def deliver(post: Post, followers: Iterable[str]) -> None:
    """The feed entries the fanout worker writes for ``post``."""
    entry = items.entry_of(post)
    for follower in followers:
        clients.dynamodb().put_item(
            TableName=feed_table(), Item=dynamo.serialize(items.feed_entry_item(follower, entry))
        )


def publish(api: ApiClient, text: str, *tags: str) -> dict[str, Any]:
    """Write a post through the API and deliver it as the fanout worker would (the post says whether
    it is fanned out)."""
    written = write_post(api, text, *tags)
    post = feed_store().get_post(written["post_id"])
    assert post is not None
    if post.delivery is Delivery.FANOUT:
        followers = [f.follower_id for f in feed_store().list_followers(post.author_id, 500, None).items]
        deliver(post, followers)
    return written


def newest_first(posts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Posts as the home feed orders them: by time, then id."""
    return sorted(posts, key=lambda p: (p["created_at"], p["post_id"]), reverse=True)
