"""Follow backfill and unfollow cleanup against moto: real stream records of follow edges, the template's
fanout queue (redelivery included: a failed message comes back, every message delivered again), and
the worker settling each follower's feed on the edge as it finds it."""

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from local.harness import feed_builders
from local.harness.fanout import FanoutLine, follow, put_post, put_profiles, unfollow
from shopfeed.feed import bootstrap, items, keys
from shopfeed.feed.home.backfill import FollowAction, FollowReport, FollowTask, settle_follow
from shopfeed.feed.home.fanout import FanoutAction, FanoutTask
from shopfeed.feed.models import Delivery, Post
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import utc_now
from tests.integration.outbox_support import CommerceStream
from tests.integration.test_feed_stream import TABLE, consume, post_records
from tests.support.calls import dynamodb_calls
from tests.support.faults import all_but_the_first, unprocessed_writes

BACKFILL = 20  # the setting's default


@pytest.fixture
def line(aws: None, monkeypatch: pytest.MonkeyPatch) -> FanoutLine:
    created = FanoutLine.create()
    monkeypatch.setenv("FEED_TABLE_NAME", TABLE)
    monkeypatch.setenv("FANOUT_QUEUE_URL", created.url)
    put_profiles(TABLE, "U100", "U200", "U300")
    return created


@pytest.fixture
def feed_stream(aws: None) -> CommerceStream:
    stream = CommerceStream(TABLE)
    stream.read()
    return stream


def posts_of_u100(count: int, start: datetime | None = None, delivery: Delivery = Delivery.FANOUT) -> list[Post]:
    """``count`` posts of U100, a minute apart going back from ``start`` (now), newest first."""
    start = start or utc_now()
    posts = [feed_builders.post("U100", at=start - timedelta(minutes=n), delivery=delivery) for n in range(count)]
    for post in posts:
        put_post(TABLE, post)
    return posts


def feed_of(user_id: str) -> list[dict[str, Any]]:
    """Every item of the user's feed partition, newest first (strongly consistent)."""
    response = clients.dynamodb().query(
        TableName=TABLE,
        KeyConditionExpression="PK = :feed",
        ExpressionAttributeValues={":feed": dynamo.value(keys.feed_partition(user_id))},
        ConsistentRead=True,
        ScanIndexForward=False,
    )
    return [dynamo.deserialize(item) for item in response["Items"]]


def entries_for(user_id: str, posts: list[Post]) -> list[dict[str, Any]]:
    """The items fanout would have written for ``posts`` in the user's feed, newest first."""
    return [items.feed_entry_item(user_id, items.entry_of(post)) for post in posts]


def task(action: FollowAction, follower: str = "U200") -> str:
    return FollowTask(action=action, follower_id=follower, author_id="U100").model_dump_json()


def test_a_follow_backfills_the_newest_fanned_out_posts_and_an_unfollow_takes_every_entry_out(
    line: FanoutLine, feed_stream: CommerceStream
) -> None:
    # given U100's 25 recent posts, a celebrity-era (pulled) one, and one older than the feed's retention
    posts = posts_of_u100(25)
    (pulled,) = posts_of_u100(1, delivery=Delivery.PULL)
    (expired,) = posts_of_u100(1, start=utc_now() - items.FEED_RETENTION - timedelta(days=1))
    feed_stream.read()  # their fanout is not what this test is about
    # when U200 follows U100 and the stream and the worker run
    follow(TABLE, "U200", "U100")
    assert consume(post_records(feed_stream.read())) == {"batchItemFailures": []}
    assert line.tasks() == [json.loads(task(FollowAction.BACKFILL))]
    with dynamodb_calls() as calls:
        line.drain()
    # then U200's feed holds the 20 newest posts as fanout writes them, less the pulled one (the feed
    # merges it at read time) and nothing past the retention
    assert feed_of("U200") == entries_for("U200", posts[: BACKFILL - 1])
    assert pulled.post_id not in {e["post_id"] for e in feed_of("U200")}
    assert expired.post_id not in {e["post_id"] for e in feed_of("U200")}
    # in one edge read before and one after, one Query, two BatchGetItem (posts checked before and after)
    assert calls.counts() == {"GetItem": 2, "Query": 1, "BatchGetItem": 2, "BatchWriteItem": 1}

    # when every message is delivered again
    line.send(list(line.delivered))
    line.drain()
    # then nothing changed
    assert feed_of("U200") == entries_for("U200", posts[: BACKFILL - 1])

    # when U200 unfollows and the stream and the worker run
    unfollow(TABLE, "U200", "U100")
    assert consume(post_records(feed_stream.read())) == {"batchItemFailures": []}
    assert line.tasks() == [json.loads(task(FollowAction.CLEANUP))]
    line.drain()
    # then no entry of U100 is left, and every message delivered again (the backfill too) changes nothing
    assert feed_of("U200") == []
    line.send(list(line.delivered))
    line.drain()
    assert feed_of("U200") == []


def test_a_backfill_dynamodb_keeps_refusing_comes_back_from_the_queue_and_ends_exact(line: FanoutLine) -> None:
    # given
    posts = posts_of_u100(BACKFILL)
    follow(TABLE, "U200", "U100")
    line.send([task(FollowAction.BACKFILL)])
    # when DynamoDB writes one request per BatchWriteItem and refuses the rest, for as long as the worker tries
    with unprocessed_writes(all_but_the_first, calls=None):
        line.poller().poll()
    # then the message is still on the queue, part of the feed written; its redelivery completes it
    assert line.tasks() == [json.loads(task(FollowAction.BACKFILL))]
    assert 0 < len(feed_of("U200")) < BACKFILL
    line.drain()
    assert feed_of("U200") == entries_for("U200", posts)


@pytest.mark.parametrize(
    ("edges", "followed_at_the_end"),
    [(("follow", "unfollow", "follow"), True), (("follow", "unfollow", "follow", "unfollow"), False)],
)
def test_follow_and_unfollow_tasks_delivered_in_any_order_and_twice_end_as_the_last_edge_says(
    line: FanoutLine, feed_stream: CommerceStream, edges: tuple[str, ...], followed_at_the_end: bool
) -> None:
    # given U100's posts, and the edge changed several times: each change queued its task
    posts = posts_of_u100(25)
    feed_stream.read()
    queued: list[str] = []
    for change in edges:
        (follow if change == "follow" else unfollow)(TABLE, "U200", "U100")
        consume(post_records(feed_stream.read()))
        queued += line.waiting()
    assert [json.loads(body)["action"] for body in queued] == [
        "backfill" if change == "follow" else "cleanup" for change in edges
    ]
    # when the tasks come in reverse order, then all of them again
    line.send(queued[::-1] + queued)
    line.drain()
    # then the feed says what the last edge says
    assert feed_of("U200") == (entries_for("U200", posts[:BACKFILL]) if followed_at_the_end else [])


def test_a_celebrity_needs_no_backfill_and_gets_none(line: FanoutLine) -> None:
    # given an author whose recent posts were all merged at read time
    posts_of_u100(5, delivery=Delivery.PULL)
    follow(TABLE, "U200", "U100")
    line.send([task(FollowAction.BACKFILL)])
    # when
    with dynamodb_calls() as calls:
        line.drain()
    # then nothing is written: the home feed merges those posts when U200 reads it
    assert feed_of("U200") == []
    assert "BatchWriteItem" not in calls.counts()


def after_first(operation: str, then: Callable[[], None]) -> Callable[[], None]:
    """Run ``then`` once, right after the first ``operation`` call the worker makes; returns the undo."""
    done: list[bool] = []

    def hook(**_: object) -> None:
        if not done:
            done.append(True)
            then()

    events = clients.dynamodb().meta.events
    events.register(f"after-call.dynamodb.{operation}", hook)
    return lambda: events.unregister(f"after-call.dynamodb.{operation}", hook)


def test_an_unfollow_whose_cleanup_runs_while_a_post_is_fanned_out_leaves_no_entry(line: FanoutLine) -> None:
    # given U200 and U300 follow U100, whose new post's fanout has read its followers (U200 among them);
    # then U200 unfollows and the cleanup runs to its end before the page writes the entries
    follow(TABLE, "U200", "U100")
    follow(TABLE, "U300", "U100")
    (post,) = posts_of_u100(1)
    line.send([FanoutTask(action=FanoutAction.ADD, entry=items.entry_of(post)).model_dump_json()])

    def unfollow_and_clean_up() -> None:
        unfollow(TABLE, "U200", "U100")
        cleanup = FollowTask(action=FollowAction.CLEANUP, follower_id="U200", author_id="U100")
        report = settle_follow(cleanup, bootstrap.fanout_store(), BACKFILL, utc_now())
        assert report == FollowReport(following=False, removed=1)  # the post's key: nothing to remove yet

    undo = after_first("Query", unfollow_and_clean_up)
    # when
    try:
        line.poller().poll()  # the page: it reads U200 and U300, then U200 leaves
    finally:
        undo()
    line.drain()
    # then the page took its entry back from U200 (the cleanup came too early to find it); U300 keeps it
    assert feed_of("U200") == []
    assert feed_of("U300") == entries_for("U300", [post])


def test_a_follow_undone_while_its_backfill_writes_leaves_no_entry(line: FanoutLine) -> None:
    # given U200's backfill is writing when U200 unfollows
    posts_of_u100(3)
    follow(TABLE, "U200", "U100")
    line.send([task(FollowAction.BACKFILL)])
    undo = after_first("BatchWriteItem", lambda: unfollow(TABLE, "U200", "U100"))
    # when (the unfollow's own cleanup is not delivered: the backfill must settle alone)
    try:
        line.drain()
    finally:
        undo()
    # then the backfill read the edge again after writing, found it gone, and cleaned up
    assert feed_of("U200") == []


def test_a_post_deleted_while_a_backfill_writes_loses_its_entry(line: FanoutLine) -> None:
    # given
    posts = posts_of_u100(3)
    follow(TABLE, "U200", "U100")
    line.send([task(FollowAction.BACKFILL)])
    deleted = posts[1]

    def delete() -> None:
        clients.dynamodb().delete_item(TableName=TABLE, Key=dynamo.serialize(keys.post(deleted.post_id)))

    undo = after_first("BatchWriteItem", delete)
    # when
    try:
        line.drain()
    finally:
        undo()
    # then
    assert feed_of("U200") == entries_for("U200", [posts[0], posts[2]])
