"""Follow backfill and unfollow cleanup (``home.backfill``) against the in-memory store: the task settles
on the edge it reads, whatever its action, and goes round again when the edge changes under it."""

from datetime import UTC, datetime, timedelta

import pytest

from shopfeed.feed.home.backfill import FollowAction, FollowReport, FollowTask, settle_follow
from shopfeed.feed.home.fanout import SETTLE_ROUNDS, EdgesKeptChanging
from shopfeed.feed.models import FeedEntry
from shopfeed.platform.clock import iso
from tests.unit.fanout_fakes import InMemoryFollowFeed

NOW = datetime(2026, 11, 22, 10, tzinfo=UTC)
EDGE = ("U100", "U200")


def task(action: FollowAction = FollowAction.BACKFILL) -> FollowTask:
    return FollowTask(action=action, follower_id="U200", author_id="U100")


def authored(count: int, *, pulled: frozenset[int] = frozenset(), days_ago: int = 0) -> InMemoryFollowFeed:
    """U100's ``count`` posts, an hour apart back from ``days_ago``; those numbered in ``pulled`` merged on read."""
    store = InMemoryFollowFeed()
    for n in range(count):
        at = iso(NOW - timedelta(days=days_ago, hours=n))
        entry = FeedEntry(post_id=f"P{days_ago:02d}{n:03d}", author_id="U100", created_at=at)
        store.posts[entry.post_id] = (entry, n not in pulled)
    return store


def newest(count: int, days_ago: int = 0) -> list[str]:
    return [f"P{days_ago:02d}{n:03d}" for n in range(count)]


def test_a_follow_gets_the_newest_posts_of_the_retention_and_no_pulled_or_older_one() -> None:
    # given 30 posts (the second one a celebrity-era post) and 5 older than the feed's 30 days
    store = authored(30, pulled=frozenset({1}))
    store.posts |= authored(5, days_ago=31).posts
    store.edges.add(EDGE)
    # when
    report = settle_follow(task(), store, backfill_posts=20, now=NOW)
    # then the 20 newest, less the pulled one
    assert store.feed_of("U200") == [p for p in newest(20) if p != "P00001"]
    assert report == FollowReport(following=True, written=19)


def test_a_backfill_setting_of_zero_writes_nothing() -> None:
    store = authored(5)
    store.edges.add(EDGE)
    assert settle_follow(task(), store, backfill_posts=0, now=NOW) == FollowReport(following=True)
    assert store.feed_of("U200") == []


@pytest.mark.parametrize("action", list(FollowAction))
def test_a_task_follows_the_edge_it_reads_not_its_action(action: FollowAction) -> None:
    # given the edge exists whatever queued the task
    store = authored(3)
    store.edges.add(EDGE)
    settle_follow(task(action), store, backfill_posts=20, now=NOW)
    assert store.feed_of("U200") == newest(3)
    # when the edge is gone
    store.edges.clear()
    settle_follow(task(action), store, backfill_posts=20, now=NOW)
    # then
    assert store.feed_of("U200") == []


def test_a_cleanup_reaches_back_past_the_retention_for_entries_ttl_has_not_deleted_yet() -> None:
    # given an entry 33 days old still in the feed (TTL deletes within days of the expiry)
    store = authored(1, days_ago=33)
    store.feeds["U200"] = {e.post_id: e for e, _ in store.posts.values()}
    # when
    report = settle_follow(task(FollowAction.CLEANUP), store, backfill_posts=20, now=NOW)
    # then
    assert store.feed_of("U200") == []
    assert report == FollowReport(following=False, removed=1)


def test_an_unfollow_while_the_backfill_writes_sends_it_round_again_to_clean_up() -> None:
    # given
    store = authored(3)
    store.edges.add(EDGE)
    store.after_write = store.edges.clear
    # when
    report = settle_follow(task(), store, backfill_posts=20, now=NOW)
    # then
    assert store.feed_of("U200") == []
    assert (report.following, report.rounds) == (False, 2)


def test_a_post_deleted_while_the_backfill_writes_loses_its_entry() -> None:
    store = authored(3)
    store.edges.add(EDGE)
    store.after_write = lambda: store.posts.pop("P00001", None) and None
    settle_follow(task(), store, backfill_posts=20, now=NOW)
    assert store.feed_of("U200") == ["P00000", "P00002"]


def test_an_edge_that_keeps_changing_fails_the_task_for_redelivery() -> None:
    # given the edge flips after every write
    store = authored(3)
    store.edges.add(EDGE)
    store.after_write = lambda: store.edges.symmetric_difference_update({EDGE})
    # when / then
    with pytest.raises(EdgesKeptChanging):
        settle_follow(task(), store, backfill_posts=20, now=NOW)
    assert SETTLE_ROUNDS == 4
