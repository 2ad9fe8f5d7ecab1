"""A post reaching a follower's home feed over HTTP against `make dev`: the feed stream consumer puts a
fanout task on the queue, the worker writes the entry, the counters follow, and a deletion takes it back."""

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from local.harness import feed_builders
from shopfeed.feed import items, keys
from shopfeed.platform import dynamo
from tests.e2e.conftest import Client, LocalStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

SETTLE_S = 60  # the stream poller and the queue poller each take a second or two here


def eventually[T](read: Callable[[], T], done: Callable[[T], bool]) -> T:
    """``read()`` once ``done`` says so, or its last value when SETTLE_S has passed."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def users(stack: LocalStack, *user_ids: str) -> list[Client]:
    """Social profiles of their own (written as registration writes them), and a client for each."""
    for user_id in user_ids:
        item = items.profile_item(feed_builders.profile(user_id))
        stack.dynamodb().put_item(TableName="FeedTable", Item=dynamo.serialize(item))
    return [Client(stack, stack.token(user_id)) for user_id in user_ids]


def counts(stack: LocalStack, user_id: str) -> tuple[int, int, int]:
    raw = stack.dynamodb().get_item(
        TableName="FeedTable", Key=dynamo.serialize(keys.profile(user_id)), ConsistentRead=True
    )
    profile = items.profile_from(dynamo.deserialize(raw["Item"]))
    return profile.followers_count, profile.following_count, profile.posts_count


def feed_of(client: Client) -> list[str]:
    answer = client.get("/feed")
    assert answer.status_code == 200, answer.text
    return [post["post_id"] for post in answer.json()["items"]]


def entries_of(stack: LocalStack, user_id: str) -> list[dict[str, Any]]:
    response = stack.dynamodb().query(
        TableName="FeedTable",
        KeyConditionExpression="PK = :feed",
        ExpressionAttributeValues={":feed": dynamo.value(keys.feed_partition(user_id))},
        ConsistentRead=True,
    )
    return [dynamo.deserialize(item) for item in response["Items"]]


def test_a_post_reaches_a_followers_home_feed_and_leaves_it_when_deleted(local_stack: LocalStack) -> None:
    # given an author and a follower
    suffix = uuid.uuid4().hex[:6].upper()
    author, follower = users(local_stack, f"UA{suffix}", f"UF{suffix}")
    author_id, follower_id = f"UA{suffix}", f"UF{suffix}"
    followed = follower.request("PUT", f"/users/{author_id}/followers/me")
    assert followed.status_code == 201, followed.text

    # when the author posts
    posted = author.post(
        "/posts", json={"text": "Single-table design", "tags": ["dynamodb"]}, headers={"Idempotency-Key": suffix}
    )
    assert posted.status_code == 201, posted.text
    post_id = posted.json()["post_id"]

    # then the post reaches the follower's feed through the stream, the queue and the worker
    assert eventually(lambda: feed_of(follower), lambda feed: post_id in feed) == [post_id]
    assert [entry["post_id"] for entry in entries_of(local_stack, follower_id)] == [post_id]
    assert eventually(lambda: counts(local_stack, author_id), lambda c: c == (1, 0, 1)) == (1, 0, 1)
    assert counts(local_stack, follower_id) == (0, 1, 0)

    # when the author deletes it, then its entry leaves the follower's feed partition and the count drops
    assert author.request("DELETE", f"/posts/{post_id}").status_code == 204
    assert eventually(lambda: entries_of(local_stack, follower_id), lambda entries: not entries) == []
    assert eventually(lambda: counts(local_stack, author_id), lambda c: c == (1, 0, 0)) == (1, 0, 0)


def test_a_follow_brings_the_authors_recent_posts_and_an_unfollow_takes_them_out(local_stack: LocalStack) -> None:
    # given an author with two posts (fanned out to nobody yet) and a reader who does not follow them
    suffix = uuid.uuid4().hex[:6].upper()
    author, reader = users(local_stack, f"UA{suffix}", f"UR{suffix}")
    author_id, reader_id = f"UA{suffix}", f"UR{suffix}"
    posted = [
        author.post("/posts", json={"text": f"Post {n}"}, headers={"Idempotency-Key": f"{suffix}-{n}"})
        for n in range(2)
    ]
    assert [answer.status_code for answer in posted] == [201, 201]
    newest_first = [answer.json()["post_id"] for answer in reversed(posted)]

    # when the reader follows, then the stream, the fanout queue and the worker backfill both posts
    assert reader.request("PUT", f"/users/{author_id}/followers/me").status_code == 201
    assert eventually(lambda: feed_of(reader), lambda feed: feed == newest_first) == newest_first

    # when the reader unfollows, then the entries leave the feed partition
    assert reader.request("DELETE", f"/users/{author_id}/followers/me").status_code == 204
    assert eventually(lambda: entries_of(local_stack, reader_id), lambda entries: not entries) == []
    assert feed_of(reader) == []
