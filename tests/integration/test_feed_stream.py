"""The FeedTable stream consumer against moto: real stream records of posts and follows, the template's
fanout queue, and the worker that drains it."""

import json
from typing import Any

import pytest

from functions.fanout_worker.app import lambda_handler as fanout_worker_handler
from functions.feed_stream.app import lambda_handler
from local.harness import feed_builders
from local.harness.apigw import sample
from local.harness.client import LambdaContext
from local.harness.fanout import (
    FanoutLine,
    delete_post,
    feed_entries,
    follower_ids,
    put_post,
    put_profiles,
    seed_followers,
)
from shopfeed.feed import items
from shopfeed.feed.models import Delivery, Post
from shopfeed.platform import clients, dynamo
from tests.integration.outbox_support import CommerceStream, batch, sequence_numbers
from tests.support.faults import refused_sends

TABLE = "FeedTable"
FEED_STREAM = LambdaContext(
    function_name="FeedStreamFunction",
    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:FeedStreamFunction",
)
WORKER_CONTEXT = LambdaContext(
    function_name="FanoutWorkerFunction",
    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:FanoutWorkerFunction",
)


@pytest.fixture
def line(aws: None, monkeypatch: pytest.MonkeyPatch) -> FanoutLine:
    created = FanoutLine.create()
    monkeypatch.setenv("FEED_TABLE_NAME", TABLE)
    monkeypatch.setenv("FANOUT_QUEUE_URL", created.url)
    monkeypatch.setenv("FANOUT_PAGE_SIZE", "10")
    put_profiles(TABLE, "U100")  # the author, whose posts_count the consumer keeps
    return created


@pytest.fixture
def feed_stream(aws: None) -> CommerceStream:
    # The reader takes any table: FeedTable's stream, read as Lambda's event source mapping shapes it.
    return CommerceStream(TABLE)


def consume(records: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(lambda_handler(batch(records), FEED_STREAM))


def post_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records the template's filter lets in: inserted or removed posts and follows."""
    return [r for r in records if r["eventName"] in ("INSERT", "REMOVE") and _entity(r) in (items.POST, items.FOLLOW)]


def _entity(record: dict[str, Any]) -> str:
    # Items without a type (a counter's applied-batch marker) are not let in by the filter either.
    image = record["dynamodb"].get("NewImage") or record["dynamodb"]["OldImage"]
    return str(image.get("entity_type", {}).get("S", ""))


def written_post(followers: list[str], delivery: Delivery = Delivery.FANOUT) -> Post:
    post = feed_builders.post("U100", delivery=delivery)
    put_post(TABLE, post)
    return post


def followed_author(stream: CommerceStream, audience: int = 15) -> list[str]:
    """U100 with ``audience`` followers; their edges' records already read off the stream."""
    followers = follower_ids(audience)
    seed_followers(TABLE, "U100", followers)
    stream.read()
    return followers


def test_a_new_post_queues_one_fanout_task_and_reaches_every_follower(
    line: FanoutLine, feed_stream: CommerceStream
) -> None:
    # given
    followers = followed_author(feed_stream)
    post = written_post(followers)
    # when
    response = consume(post_records(feed_stream.read()))
    # then
    assert response == {"batchItemFailures": []}
    assert line.tasks() == [{"action": "add", "entry": items.entry_of(post).model_dump(), "page": None}]
    line.drain()
    assert sorted(feed_entries(TABLE, followers, post)) == followers


def test_a_celebrity_post_delivered_by_pull_queues_no_task(line: FanoutLine, feed_stream: CommerceStream) -> None:
    # given
    written_post(follower_ids(3), Delivery.PULL)
    # when
    response = consume(post_records(feed_stream.read()))
    # then
    assert response == {"batchItemFailures": []}
    assert line.tasks() == []


def test_a_deleted_post_queues_its_removal_and_leaves_no_entry(line: FanoutLine, feed_stream: CommerceStream) -> None:
    # given a post fanned out to 15 followers
    followers = followed_author(feed_stream)
    post = written_post(followers)
    consume(post_records(feed_stream.read()))
    line.drain()
    # when it is deleted
    delete_post(TABLE, post)
    response = consume(post_records(feed_stream.read()))
    # then
    assert response == {"batchItemFailures": []}
    assert [task["action"] for task in line.tasks()] == ["remove"]
    line.drain()
    assert feed_entries(TABLE, followers, post) == {}


def test_a_post_created_and_deleted_before_the_consumer_runs_leaves_no_entry(
    line: FanoutLine, feed_stream: CommerceStream
) -> None:
    # given both records in one batch: the ADD task runs after the post is gone
    followers = followed_author(feed_stream)
    post = written_post(followers)
    delete_post(TABLE, post)
    # when
    consume(post_records(feed_stream.read()))
    line.drain()
    # then
    assert feed_entries(TABLE, followers, post) == {}


def test_a_task_the_queue_refuses_fails_only_its_own_record(line: FanoutLine, feed_stream: CommerceStream) -> None:
    # given three new posts, and SQS refusing the second one's task
    posts = [written_post([]) for _ in range(3)]
    records = post_records(feed_stream.read())
    # when
    with refused_sends(lambda body: posts[1].post_id in body) as refused:
        response = consume(records)
    # then
    assert len(refused) == 1
    assert response == {"batchItemFailures": [{"itemIdentifier": sequence_numbers(records)[1]}]}
    assert sorted(task["entry"]["post_id"] for task in line.tasks()) == sorted([posts[0].post_id, posts[2].post_id])


def test_a_record_whose_post_image_is_unreadable_fails_alone(line: FanoutLine, feed_stream: CommerceStream) -> None:
    # given a good post and a post item without its author
    good = written_post([])
    records = post_records(feed_stream.read())
    broken = json.loads(json.dumps(records[0]))
    broken["dynamodb"]["SequenceNumber"] = "9" + broken["dynamodb"]["SequenceNumber"]
    del broken["dynamodb"]["NewImage"]["author_id"]
    # when
    response = consume([*records, broken])
    # then
    assert response == {"batchItemFailures": [{"itemIdentifier": broken["dynamodb"]["SequenceNumber"]}]}
    assert [task["entry"]["post_id"] for task in line.tasks()] == [good.post_id]


def test_the_sample_events_chain_a_post_of_u100_into_u400s_feed(line: FanoutLine) -> None:
    # given the items of the sample stream records: U400 follows U100, U100 posted
    follow_record = sample("streams/feed_follow_inserted.json")
    post_record = sample("streams/feed_post_inserted.json")
    put_profiles(TABLE, "U400")
    for event in (follow_record, post_record):
        clients.dynamodb().put_item(TableName=TABLE, Item=event["Records"][0]["dynamodb"]["NewImage"])
    # when the consumer gets the post's sample record, and the worker the fanout sample message
    response = consume(post_record["Records"])
    queued = line.tasks()
    worker = fanout_worker_handler(sample("sqs/fanout_task.json"), WORKER_CONTEXT)
    # then the consumer queued exactly the sample message's task, and U400's feed holds the post
    assert response == {"batchItemFailures": []}
    assert queued == [json.loads(sample("sqs/fanout_task.json")["Records"][0]["body"])]
    assert worker == {"batchItemFailures": []}
    post = items.post_from(dynamo.deserialize(post_record["Records"][0]["dynamodb"]["NewImage"]))
    assert list(feed_entries(TABLE, ["U400"], post)) == ["U400"]
