"""Followers, following and posts counters, kept by the FeedTable stream consumer from real stream
records (moto): exact when Lambda delivers a batch twice or again from a failed record, and one write
per profile per batch."""

from typing import Any

import pytest

from functions.feed_stream.app import lambda_handler
from local.harness import feed_builders
from local.harness.fanout import (
    FanoutLine,
    counts,
    delete_post,
    follow,
    put_post,
    put_profiles,
    unfollow,
)
from shopfeed.platform import exactly_once
from tests.integration.outbox_support import CommerceStream, batch, redelivery, sequence_numbers
from tests.integration.test_feed_stream import FEED_STREAM, TABLE, post_records
from tests.support.calls import dynamodb_calls
from tests.support.faults import refused_sends


@pytest.fixture
def feed(aws: None, monkeypatch: pytest.MonkeyPatch) -> CommerceStream:
    """U100, U200, U300 and U400 registered; FeedTable's stream read from here on."""
    line = FanoutLine.create()
    monkeypatch.setenv("FEED_TABLE_NAME", TABLE)
    monkeypatch.setenv("FANOUT_QUEUE_URL", line.url)
    put_profiles(TABLE, "U100", "U200", "U300", "U400")
    stream = CommerceStream(TABLE)
    stream.read()
    return stream


def consume(records: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(lambda_handler(batch(records), FEED_STREAM))


def test_follows_and_posts_are_counted_on_both_ends(feed: CommerceStream) -> None:
    # given
    follow(TABLE, "U200", "U100")
    follow(TABLE, "U300", "U100")
    follow(TABLE, "U100", "U400")
    put_post(TABLE, feed_builders.post("U100"))
    # when
    response = consume(post_records(feed.read()))
    # then
    assert response == {"batchItemFailures": []}
    assert counts(TABLE, "U100") == (2, 1, 1)
    assert counts(TABLE, "U200") == (0, 1, 0)
    assert counts(TABLE, "U400") == (1, 0, 0)


def test_an_unfollow_and_a_deleted_post_take_their_counts_back(feed: CommerceStream) -> None:
    # given
    post = feed_builders.post("U100")
    follow(TABLE, "U200", "U100")
    put_post(TABLE, post)
    consume(post_records(feed.read()))
    # when
    unfollow(TABLE, "U200", "U100")
    delete_post(TABLE, post)
    response = consume(post_records(feed.read()))
    # then
    assert response == {"batchItemFailures": []}
    assert counts(TABLE, "U100") == (0, 0, 0)
    assert counts(TABLE, "U200") == (0, 0, 0)


def test_every_batch_delivered_twice_counts_each_record_once(feed: CommerceStream) -> None:
    # given
    for follower in ("U200", "U300", "U400"):
        follow(TABLE, follower, "U100")
    put_post(TABLE, feed_builders.post("U100"))
    first = post_records(feed.read())
    unfollow(TABLE, "U300", "U100")
    second = post_records(feed.read())
    # when each batch is delivered twice, the second one also interleaved with the first's repeat
    for records in (first, first, second, first, second):
        assert consume(records) == {"batchItemFailures": []}
    # then
    assert counts(TABLE, "U100") == (2, 0, 1)
    assert counts(TABLE, "U300") == (0, 0, 0)


def test_a_retry_from_a_failed_record_counts_the_records_after_it_once(feed: CommerceStream) -> None:
    # given a batch whose second post's fanout task SQS refuses, with follows before and after it
    follow(TABLE, "U200", "U100")
    refused_post = feed_builders.post("U100")
    put_post(TABLE, feed_builders.post("U100"))
    put_post(TABLE, refused_post)
    follow(TABLE, "U300", "U100")
    records = post_records(feed.read())
    with refused_sends(lambda body: refused_post.post_id in body):
        first = consume(records)
    # when Lambda delivers again from the failed record on, as a partial batch response asks
    retried = redelivery(records, first)
    second = consume(retried)
    # then
    assert [r["dynamodb"]["SequenceNumber"] for r in retried] == sequence_numbers(records)[2:]
    assert second == {"batchItemFailures": []}
    assert counts(TABLE, "U100") == (2, 0, 2)
    assert counts(TABLE, "U300") == (0, 1, 0)


def test_a_follow_and_its_unfollow_in_one_batch_stay_exact_when_only_the_unfollow_comes_again(
    feed: CommerceStream,
) -> None:
    # given a batch where they cancel out
    follow(TABLE, "U200", "U100")
    unfollow(TABLE, "U200", "U100")
    records = post_records(feed.read())
    assert consume(records) == {"batchItemFailures": []}
    # when only the unfollow is delivered again (a retry from it on)
    consume(records[1:])
    # then
    assert counts(TABLE, "U100") == (0, 0, 0)
    assert counts(TABLE, "U200") == (0, 0, 0)


def test_a_batch_writes_each_counted_profile_once(feed: CommerceStream) -> None:
    # given 3 follows of U100, U100 following U400 and posting twice: profiles U100, U200, U300, U400
    for follower in ("U200", "U300", "U400"):
        follow(TABLE, follower, "U100")
    follow(TABLE, "U100", "U400")
    put_post(TABLE, feed_builders.post("U100"))
    put_post(TABLE, feed_builders.post("U100"))
    records = post_records(feed.read())
    # when
    with dynamodb_calls() as calls:
        consume(records)
    # then one counter write (a transaction with its marks) per distinct profile, for 6 records, and
    # one per leaderboard entry the follows count on (followees U100 and U400, this month)
    assert len(records) == 6
    assert calls.counts()["TransactWriteItems"] == 4 + 2
    assert counts(TABLE, "U100") == (3, 1, 2)
    assert counts(TABLE, "U400") == (1, 1, 0)


def test_a_follow_of_a_profile_that_does_not_exist_fails_its_record_however_often_it_comes(
    feed: CommerceStream,
) -> None:
    # given
    follow(TABLE, "U200", "U-NOBODY")
    follow(TABLE, "U300", "U100")
    records = post_records(feed.read())
    # when it is delivered, then retried twice (it reaches the DLQ once its retries are used up)
    responses = [consume(records), consume(records), consume(records)]
    # then it fails each time; each existing profile is counted once, by its own write
    assert responses == [{"batchItemFailures": [{"itemIdentifier": sequence_numbers(records)[0]}]}] * 3
    assert counts(TABLE, "U200") == (0, 1, 0)
    assert counts(TABLE, "U100") == (1, 0, 0)


def test_counted_records_leave_applied_sets_that_expire(feed: CommerceStream) -> None:
    # given
    follow(TABLE, "U200", "U100")
    records = post_records(feed.read())
    # when
    consume(records)
    # then one set per counted item, each holding the one record, which expires
    from local.harness.tables import table_items

    sets = [item for item in table_items(TABLE) if item.get("entity_type") == exactly_once.APPLIED_ENTITY_TYPE]
    assert len(sets) == 3  # the two profiles and the followee's leaderboard entry
    assert {frozenset(s[exactly_once.APPLIED]) for s in sets} == {frozenset(sequence_numbers(records))}
    assert all(s["expires_at"] > 0 for s in sets)
