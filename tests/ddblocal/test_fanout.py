"""Fanout at scale on DynamoDB Local: 10,000 followers, every page through the worker and its queue.

DynamoDB Local serves FeedTable; the fanout queue is SQS in a moto server (DynamoDB Local has no SQS),
delivered to the worker by the local stack's poller with the template's event source mapping.
"""

from typing import Any

import pytest

from local.harness import feed_builders
from local.harness.fanout import FanoutLine, follower_ids, put_post, seed_followers
from shopfeed.feed import items
from shopfeed.feed.home.fanout import PAGE_SIZE, FanoutAction, FanoutTask
from shopfeed.platform import clients, dynamo
from tests.conftest import reset_caches
from tests.support.calls import dynamodb_calls

pytestmark = [pytest.mark.ddblocal, pytest.mark.volume, pytest.mark.xdist_group(__name__)]

AUDIENCE = 10_000


@pytest.fixture
def line(tables: dict[str, str], sqs_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> FanoutLine:
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", sqs_endpoint)
    monkeypatch.setenv("FEED_TABLE_NAME", tables["FeedTable"])
    reset_caches()
    created = FanoutLine.create()
    monkeypatch.setenv("FANOUT_QUEUE_URL", created.url)
    reset_caches()
    return created


def entries_in(table: str) -> list[dict[str, Any]]:
    """Every feed entry of the table (a consistent Scan: tests only)."""
    pages = (
        clients.dynamodb()
        .get_paginator("scan")
        .paginate(
            TableName=table,
            ConsistentRead=True,
            FilterExpression="entity_type = :entry",
            ExpressionAttributeValues={":entry": dynamo.value(items.FEED_ENTRY)},
        )
    )
    return [dynamo.deserialize(item) for page in pages for item in page["Items"]]


def test_an_author_with_ten_thousand_followers_reaches_each_exactly_once_even_when_every_message_comes_twice(
    line: FanoutLine, tables: dict[str, str]
) -> None:
    # given
    table = tables["FeedTable"]
    followers = follower_ids(AUDIENCE)
    seed_followers(table, "U100", followers, indexed=False)
    post = feed_builders.post("U100")
    put_post(table, post)
    line.send([FanoutTask(action=FanoutAction.ADD, entry=items.entry_of(post)).model_dump_json()])

    # when
    with dynamodb_calls() as calls:
        line.drain()

    # then one entry per follower, in a bounded number of pages and calls
    written = entries_in(table)
    assert len(written) == AUDIENCE
    assert sorted(keys_of(written)) == sorted(items.feed_entry_item(f, items.entry_of(post))["PK"] for f in followers)
    assert {entry["post_id"] for entry in written} == {post.post_id}
    pages = AUDIENCE // PAGE_SIZE
    assert len(line.delivered) == pages
    assert calls.counts() == {"Query": 2 * pages, "GetItem": 2 * pages, "BatchWriteItem": AUDIENCE // 25}

    # when every fanout message is delivered once more, one at a time
    chain = list(line.delivered)
    continued = [redelivered(line, body) for body in chain]

    # then nothing changed, and each copy continued with a copy of the next page's message (no new
    # message): a copy's own chain is copies of the messages just redelivered, each proven harmless
    # here once. (Draining those chains too wrote 45 more pages of the same items: 114 s of 170.)
    assert sorted(map(str, entries_in(table))) == sorted(map(str, written))
    assert line.delivered == chain + chain
    assert continued == [[body] for body in chain[1:]] + [[]]


def redelivered(line: FanoutLine, body: str) -> list[str]:
    """Deliver ``body`` to the worker alone; answers the messages it put on the queue, taken off it."""
    line.send([body])
    assert line.poller().poll() == 1
    sqs = clients.sqs()
    taken = sqs.receive_message(QueueUrl=line.url, MaxNumberOfMessages=10).get("Messages", [])
    for message in taken:
        sqs.delete_message(QueueUrl=line.url, ReceiptHandle=message["ReceiptHandle"])
    return [message["Body"] for message in taken]


def keys_of(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["PK"] for entry in entries]
