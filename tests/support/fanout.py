"""The fanout queue and its worker as the template declares them, for the moto and DynamoDB Local tiers.

The queues and the worker are the template's (``tests.support.queues``); seeding writes FeedTable items
with the feed package's own builders.
"""

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from shopfeed.feed import items, keys
from shopfeed.feed.models import Post
from shopfeed.platform import batch_writes, clients, dynamo
from tests.support.queues import WorkerQueue
from tests.unit import feed_builders

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


def every_second(position: int) -> bool:
    return position % 2 == 1


def all_but_the_first(position: int) -> bool:
    return position > 0


@contextmanager
def unprocessed_writes(refuse: Callable[[int], bool] = every_second, calls: int | None = 1) -> Iterator[list[int]]:
    """DynamoDB throttling part of each BatchWriteItem, as it does under load: the requests at the
    positions ``refuse`` picks are left unwritten and handed back in UnprocessedItems, for the first
    ``calls`` calls (None: every call). The first request always goes through, as a throttled batch
    still makes progress. Yields the number of requests refused per call."""
    refused: list[int] = []
    held: list[Any] = []
    events = clients.dynamodb().meta.events

    def withhold(params: dict[str, Any], **_: Any) -> None:
        held.clear()
        if calls is not None and len(refused) >= calls:
            return
        for table, requests in params["RequestItems"].items():
            held.extend((table, r) for n, r in enumerate(requests) if n and refuse(n))
            params["RequestItems"][table] = [r for n, r in enumerate(requests) if not (n and refuse(n))]
        refused.append(len(held))

    def hand_back(parsed: dict[str, Any], **_: Any) -> None:
        unprocessed = parsed.setdefault("UnprocessedItems", {})
        for table, request in held:
            unprocessed.setdefault(table, []).append(request)

    with _hooked(
        events,
        {"provide-client-params.dynamodb.BatchWriteItem": withhold, "after-call.dynamodb.BatchWriteItem": hand_back},
    ):
        yield refused


@contextmanager
def refused_sends(refuse: Callable[[str], bool]) -> Iterator[list[str]]:
    """SQS refusing some entries of each SendMessageBatch (HTTP 200 with ``Failed`` entries, as it does
    when throttled): the bodies ``refuse`` picks are not sent. Yields the refused bodies."""
    refused: list[str] = []
    held: list[dict[str, Any]] = []
    events = clients.sqs().meta.events

    def withhold(params: dict[str, Any], **_: Any) -> None:
        held[:] = [entry for entry in params["Entries"] if refuse(entry["MessageBody"])]
        params["Entries"] = [entry for entry in params["Entries"] if not refuse(entry["MessageBody"])]
        refused.extend(entry["MessageBody"] for entry in held)

    def report(parsed: dict[str, Any], **_: Any) -> None:
        failed = [{"Id": e["Id"], "SenderFault": False, "Code": "InternalError", "Message": "refused"} for e in held]
        parsed["Failed"] = parsed.get("Failed", []) + failed

    with _hooked(
        events, {"provide-client-params.sqs.SendMessageBatch": withhold, "after-call.sqs.SendMessageBatch": report}
    ):
        yield refused


@contextmanager
def _hooked(events: Any, handlers: dict[str, Callable[..., None]]) -> Iterator[None]:
    """botocore event handlers registered for the block: a fault injected where the SDK would see it."""
    for name, handler in handlers.items():
        events.register(name, handler)
    try:
        yield
    finally:
        for name, handler in handlers.items():
            events.unregister(name, handler)


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
