"""The fanout queue and its worker as the template declares them, for the moto and DynamoDB Local tiers
and the benchmarks.

The queues and the worker are the template's (``local.harness.queues``); seeding writes FeedTable items
with the feed package's own builders.
"""

import json
from collections.abc import Sequence
from typing import Any

from local.harness import feed_builders
from local.harness.queues import WorkerQueue
from shopfeed.feed import items, keys
from shopfeed.feed.models import Post
from shopfeed.platform import batch_writes, clients, dynamo

WORKER = "FanoutWorkerFunction"


class FanoutLine(WorkerQueue):
    """FanoutQueue, FanoutDLQ and the worker reading the queue."""

    @classmethod
    def create(cls) -> "FanoutLine":
        return cls.of("FanoutQueue", "FanoutDLQ", WORKER)

    def tasks(self) -> list[dict[str, Any]]:
        """The tasks waiting on the queue, left there (hidden while they are counted, then visible again)."""
        return [json.loads(body) for body in self.waiting(release=True)]


# -- FeedTable content ---------------------------------------------------------------------------


def follower_ids(count: int, prefix: str = "F") -> list[str]:
    return [f"{prefix}{n:05d}" for n in range(count)]


def seed_followers(table: str, author_id: str, followers: Sequence[str], indexed: bool = True) -> None:
    """Follow edges of ``followers`` to ``author_id`` (what the follow route writes, minus the counters).

    ``indexed=False`` leaves out the edges' index keys: fanout reads the base table only, and tens of
    thousands of edges seed far faster on DynamoDB Local without their two index writes each.
    """
    index_keys = {keys.FOLLOWERS_BY_USER.partition_key, keys.FOLLOWERS_BY_USER.sort_key}
    index_keys |= {keys.FOLLOWING_BY_USER.partition_key, keys.FOLLOWING_BY_USER.sort_key}
    requests: list[Any] = []
    for follower in followers:
        item = items.follow_item(feed_builders.follow(follower, author_id))
        if not indexed:
            item = {name: value for name, value in item.items() if name not in index_keys}
        requests.append({"PutRequest": {"Item": dynamo.serialize(item)}})
    batch_writes.write_all(clients.dynamodb(), table, requests)


def put_post(table: str, post: Post) -> None:
    clients.dynamodb().put_item(TableName=table, Item=dynamo.serialize(items.post_item(post)))


def delete_post(table: str, post: Post) -> None:
    clients.dynamodb().delete_item(TableName=table, Key=dynamo.serialize(keys.post(post.post_id)))


def feed_entries(table: str, followers: Sequence[str], post: Post) -> dict[str, dict[str, Any]]:
    """The post's entry in each follower's feed that has one, by follower (strongly consistent reads)."""
    found: dict[str, dict[str, Any]] = {}
    for follower in followers:
        response = clients.dynamodb().query(
            TableName=table,
            KeyConditionExpression="PK = :feed",
            ExpressionAttributeValues={":feed": dynamo.value(keys.feed_partition(follower))},
            ConsistentRead=True,
        )
        for raw in response["Items"]:
            item = dynamo.deserialize(raw)
            if item["post_id"] == post.post_id:
                found[follower] = item
    return found


def put_profiles(table: str, *user_ids: str) -> None:
    for user_id in user_ids:
        item = items.profile_item(feed_builders.profile(user_id))
        clients.dynamodb().put_item(TableName=table, Item=dynamo.serialize(item))


def follow(table: str, follower_id: str, followee_id: str) -> None:
    item = items.follow_item(feed_builders.follow(follower_id, followee_id))
    clients.dynamodb().put_item(TableName=table, Item=dynamo.serialize(item))


def unfollow(table: str, follower_id: str, followee_id: str) -> None:
    clients.dynamodb().delete_item(TableName=table, Key=dynamo.serialize(keys.follow(followee_id, follower_id)))


def counts(table: str, user_id: str) -> tuple[int, int, int]:
    """(followers, following, posts) of a profile, strongly consistent."""
    raw = clients.dynamodb().get_item(TableName=table, Key=dynamo.serialize(keys.profile(user_id)), ConsistentRead=True)
    profile = items.profile_from(dynamo.deserialize(raw["Item"]))
    return profile.followers_count, profile.following_count, profile.posts_count
