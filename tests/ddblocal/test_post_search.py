"""Post search on DynamoDB Local: make reindex of thousands of posts matches FeedTable, and a post
record that can never index is retried, then reported to the stream's on-failure destination (the
template's event source mapping, run by the local stack's poller) while every other post is queued on
the search sync queue (SQS in a moto server) and indexed by the worker."""

import os
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import boto3
import pytest

from local.harness import feed_builders
from local.harness.builders import EARLIER
from local.harness.feed_seed import register_profiles
from local.harness.feed_stream import deliver_all, feed_stream_poller
from shopfeed.feed import items, keys
from shopfeed.feed.models import Delivery
from shopfeed.feed.posts.search import POSTS, post_document
from shopfeed.feed.reindex import POSTS_SOURCE
from shopfeed.platform import clients
from shopfeed.platform.search import Remove, SearchIndex, SearchQuery, reindex
from shopfeed.platform.search.opensearch import connect
from shopfeed.platform.search.rebuild import Pace
from tests.conftest import reset_caches
from tests.ddblocal.conftest import StoredItems
from tests.support.catalog import put_items
from tests.support.search import SearchSyncLine, osmem_engine, osmem_url, search_index

__all__ = ["osmem_engine", "osmem_url", "search_index"]

pytestmark = [pytest.mark.ddblocal, pytest.mark.volume, pytest.mark.xdist_group(__name__)]

POST_COUNT = 2000
_WORDS = ("sparse index", "access pattern", "single table")


def posts(count: int) -> list[dict[str, Any]]:
    """``count`` post items of three authors, a minute apart, over three subjects."""
    return [
        items.post_item(
            feed_builders.post(
                f"U{n % 3}",
                tags=(f"tag{n % 5}",),
                at=EARLIER + timedelta(minutes=n),
                text=f"Post {n} on {_WORDS[n % 3]}",
            )
        )
        for n in range(count)
    ]


def assert_index_holds_the_posts(index: SearchIndex, table_items: list[dict[str, Any]]) -> int:
    """Every post item of the table is its document at its version, field by field; how many."""
    table = {item["post_id"]: item for item in table_items if item.get("entity_type") == items.POST}
    ids = sorted(table)
    for start in range(0, len(ids), 500):
        stored = index.get(POSTS, ids[start : start + 500])
        for post_id in ids[start : start + 500]:
            item = table[post_id]
            assert (stored[post_id].version, stored[post_id].deleted) == (item["version"], False), post_id
            assert dict(stored[post_id].body) == post_document(item)[1], post_id
    return len(ids)


def test_reindex_of_2000_posts_matches_the_table(tables: dict[str, str], search_index: SearchIndex) -> None:
    # given: the posts, a profile (another type), and a live index holding a tombstone
    table = tables["FeedTable"]
    put_items(table, [*posts(POST_COUNT), items.profile_item(feed_builders.profile("U0"))])
    search_index.write(POSTS, [Remove("01ARZ3NDEKTSV4RRFFQ69G5FAV", 1)])
    unpaced = Pace(items_per_second=1e9, sleep=lambda _: None)
    # when
    report = reindex.reindex(POSTS_SOURCE, clients.dynamodb(), table, search_index, 1e9, 500, unpaced)
    # then: every post is its document; the old index (and its tombstone) is gone
    assert (report.indexed, report.caught_up, report.failures) == (POST_COUNT, 0, {})
    assert report.dropped == [POSTS.physical]
    assert assert_index_holds_the_posts(search_index, StoredItems(table).all()) == POST_COUNT
    assert search_index.get(POSTS, ["01ARZ3NDEKTSV4RRFFQ69G5FAV"]) == {}
    found = search_index.search(POSTS, SearchQuery("sparse", ("text",), 5, {"tags": "tag0"}))
    assert len(found.hits) == 5


def sequence_number_of(table: str, partition_key: str) -> str:
    """The stream record of the item with that PK (its only one here), read from the stream's start."""
    streams = boto3.client("dynamodbstreams", endpoint_url=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"))
    arn = clients.dynamodb().describe_table(TableName=table)["Table"]["LatestStreamArn"]
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        start = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")
        for record in streams.get_records(ShardIterator=start["ShardIterator"])["Records"]:
            if record["dynamodb"]["Keys"]["PK"]["S"] == partition_key:
                return str(record["dynamodb"]["SequenceNumber"])
    raise AssertionError(f"no stream record of {partition_key}")


class Collected:
    """An on-failure destination that keeps Lambda's invocation records."""

    name = "FeedStreamDLQ"

    def __init__(self) -> None:
        self.records: list[Mapping[str, Any]] = []

    def send(self, invocation_record: Mapping[str, Any]) -> None:
        self.records.append(invocation_record)


def test_a_post_that_can_never_index_reaches_the_dlq_and_the_others_are_searchable(
    tables: dict[str, str], osmem_url: str, sqs_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: an author above the celebrity threshold (pull posts: no fanout queue involved), two good
    # posts around one without text, which no route writes and no engine can index
    table = tables["FeedTable"]
    monkeypatch.setenv("SEARCH_ENDPOINT", osmem_url)
    monkeypatch.setenv("FANOUT_QUEUE_URL", "http://127.0.0.1:1/000000000000/FanoutQueue")
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", sqs_endpoint)
    reset_caches()
    search_sync = SearchSyncLine.create()
    monkeypatch.setenv("SEARCH_SYNC_QUEUE_URL", search_sync.url)
    reset_caches()
    register_profiles("U100")
    good = [feed_builders.post("U100", delivery=Delivery.PULL, text=f"Good post {n}") for n in range(2)]
    poison = {
        **keys.post("01ARZ3NDEKTSV4RRFFQ69G5FAV"),
        "entity_type": items.POST,
        "post_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV",
    }
    put_items(table, [items.post_item(good[0])])
    put_items(table, [poison])
    put_items(table, [items.post_item(good[1])])
    poller = feed_stream_poller(table)
    dlq = Collected()
    poller.destination = dlq
    # when
    deliver_all(poller)
    search_sync.drain()
    # then: after the mapping's retries, the batch from the poison record on was parked (Lambda
    # resumes at the first failed record; the good post after it was queued on every attempt)
    (parked,) = dlq.records
    batch = parked["DDBStreamBatchInfo"]
    assert parked["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert batch["startSequenceNumber"] == sequence_number_of(table, poison["PK"])
    assert search_sync.dead_letters() == []
    index = connect(osmem_url, timeout=60)
    index.refresh(POSTS)
    hits = index.search(POSTS, SearchQuery("good post", ("text",), 10)).hits
    assert sorted(hit.doc_id for hit in hits) == sorted(post.post_id for post in good)
    assert index.get(POSTS, ["01ARZ3NDEKTSV4RRFFQ69G5FAV"]) == {}
