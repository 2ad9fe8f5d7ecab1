"""The fanout worker against moto: the template's FanoutQueue (with its DLQ), the worker invoked through
its SQS event source mapping, feed entries read back from FeedTable."""

import json

import pytest

from local.harness import feed_builders
from local.harness.fanout import (
    FanoutLine,
    delete_post,
    feed_entries,
    follower_ids,
    put_post,
    seed_followers,
)
from shopfeed.feed import items
from shopfeed.feed.home.fanout import FanoutAction, FanoutTask
from shopfeed.feed.models import Delivery, Post
from shopfeed.platform import clients
from tests.support.calls import dynamodb_calls
from tests.support.faults import all_but_the_first, unprocessed_writes

TABLE = "FeedTable"
PAGE = 10


@pytest.fixture
def line(aws: None, monkeypatch: pytest.MonkeyPatch) -> FanoutLine:
    created = FanoutLine.create()
    monkeypatch.setenv("FEED_TABLE_NAME", TABLE)
    monkeypatch.setenv("FANOUT_QUEUE_URL", created.url)
    monkeypatch.setenv("FANOUT_PAGE_SIZE", str(PAGE))
    return created


def posted(followers: list[str], delivery: Delivery = Delivery.FANOUT) -> Post:
    post = feed_builders.post("U100", delivery=delivery)
    seed_followers(TABLE, "U100", followers)
    put_post(TABLE, post)
    return post


def task(post: Post, action: FanoutAction = FanoutAction.ADD) -> str:
    return FanoutTask(action=action, entry=items.entry_of(post)).model_dump_json()


def test_a_post_reaches_every_follower_as_one_entry_with_its_ttl(line: FanoutLine) -> None:
    # given 25 followers: three pages of ten
    followers = follower_ids(25)
    post = posted(followers)
    line.send([task(post)])
    # when
    with dynamodb_calls() as calls:
        line.drain()
    # then
    entries = feed_entries(TABLE, followers, post)
    assert sorted(entries) == followers
    expected = {k: v for k, v in items.feed_entry_item("F00000", items.entry_of(post)).items() if k != "PK"}
    assert {k: v for k, v in entries["F00000"].items() if k != "PK"} == expected
    assert entries["F00000"]["expires_at"] == expected["expires_at"]
    # two Queries per page (its followers, and their range read again after the writes), and the post
    # checked before and after each page's writes
    assert len(line.delivered) == 3
    counts = calls.counts()
    assert counts["Query"] == 6
    assert counts["GetItem"] == 6
    assert counts["BatchWriteItem"] == 3


def test_redelivering_every_fanout_message_once_more_changes_nothing(line: FanoutLine) -> None:
    # given a fanout that has run to the end
    followers = follower_ids(25)
    post = posted(followers)
    line.send([task(post)])
    line.drain()
    before = feed_entries(TABLE, followers, post)
    delivered = list(line.delivered)
    # when every message it handled is delivered once more
    line.send(delivered)
    line.drain()
    # then
    assert len(delivered) == 3
    assert feed_entries(TABLE, followers, post) == before
    assert len(before) == 25


def test_every_unprocessed_item_is_written_again(line: FanoutLine) -> None:
    # given DynamoDB leaves every second write of the first call unprocessed
    followers = follower_ids(PAGE)
    post = posted(followers)
    line.send([task(post)])
    # when
    with unprocessed_writes(calls=1) as refused, dynamodb_calls() as calls:
        line.drain()
    # then the refused half went again in a second call
    assert refused == [5]
    assert calls.counts()["BatchWriteItem"] == 2
    assert sorted(feed_entries(TABLE, followers, post)) == followers


def test_a_page_dynamodb_keeps_refusing_fails_its_message_for_redelivery(line: FanoutLine) -> None:
    # given DynamoDB writes one request per call and refuses the rest, for as long as the worker tries
    followers = follower_ids(PAGE)
    post = posted(followers)
    line.send([task(post)])
    # when
    with unprocessed_writes(all_but_the_first, calls=None):
        line.poller().poll()
    # then the message is still on the queue, and what was written is written again on redelivery
    assert line.tasks() == [json.loads(task(post))]
    assert 0 < len(feed_entries(TABLE, followers, post)) < PAGE
    line.drain()
    assert sorted(feed_entries(TABLE, followers, post)) == followers


def test_a_post_deleted_before_its_fanout_leaves_no_entry(line: FanoutLine) -> None:
    # given
    followers = follower_ids(25)
    post = posted(followers)
    delete_post(TABLE, post)
    line.send([task(post)])
    # when
    line.drain()
    # then
    assert feed_entries(TABLE, followers, post) == {}
    assert len(line.delivered) == 1


def test_a_post_deleted_during_its_fanout_leaves_no_entry_once_its_removal_ran(line: FanoutLine) -> None:
    # given the first page is written, then the post is deleted and its removal task queued
    followers = follower_ids(25)
    post = posted(followers)
    line.send([task(post)])
    line.poller().poll()
    delete_post(TABLE, post)
    line.send([task(post, FanoutAction.REMOVE)])
    # when
    line.drain()
    # then
    assert feed_entries(TABLE, followers, post) == {}


def test_a_post_deleted_while_a_page_is_written_leaves_none_of_that_page(line: FanoutLine) -> None:
    # given the post disappears while the first page's entries are being written (its removal ran before)
    followers = follower_ids(PAGE)
    post = posted(followers)
    line.send([task(post)])
    deleted: list[str] = []

    def delete_once(**_: object) -> None:
        if not deleted:
            deleted.append(post.post_id)
            delete_post(TABLE, post)

    events = clients.dynamodb().meta.events
    events.register("after-call.dynamodb.BatchWriteItem", delete_once)
    # when
    try:
        line.drain()
    finally:
        events.unregister("after-call.dynamodb.BatchWriteItem", delete_once)
    # then
    assert deleted == [post.post_id]
    assert feed_entries(TABLE, followers, post) == {}


def test_a_removal_deletes_the_entries_of_every_follower(line: FanoutLine) -> None:
    # given
    followers = follower_ids(25)
    post = posted(followers)
    line.send([task(post)])
    line.drain()
    delete_post(TABLE, post)
    # when
    line.send([task(post, FanoutAction.REMOVE)])
    line.drain()
    # then
    assert feed_entries(TABLE, followers, post) == {}


def test_a_malformed_message_fails_alone_and_ends_in_the_dead_letter_queue(line: FanoutLine) -> None:
    # given a good task and a poison message in one batch
    followers = follower_ids(5)
    post = posted(followers)
    line.send([task(post), '{"action": "add"}'])
    # when the queue is drained past the redrive policy's five receives
    line.drain()
    # then
    assert sorted(feed_entries(TABLE, followers, post)) == followers
    assert line.dead_letters() == ['{"action": "add"}']
