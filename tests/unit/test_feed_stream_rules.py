"""What the feed stream consumer makes of each record: the fanout task and the counts, without AWS."""

from datetime import UTC, datetime

import pytest

from local.harness import feed_builders
from shopfeed.feed import items, keys
from shopfeed.feed.follows.counters import counted_on_profiles
from shopfeed.feed.home.backfill import FollowAction, FollowTask, follow_task
from shopfeed.feed.home.fanout import FanoutAction, FanoutTask, fanout_task
from shopfeed.feed.models import Delivery
from shopfeed.platform.counters import Increment
from shopfeed.platform.streams import ChangeKind, ItemChange, made_of

AT = datetime(2026, 11, 22, 10, tzinfo=UTC)


def change(kind: ChangeKind, item: dict[str, object], sequence_number: str = "1") -> ItemChange:
    key = {"PK": item["PK"], "SK": item["SK"]}
    new, old = (None, item) if kind is ChangeKind.REMOVE else (item, None if kind is ChangeKind.INSERT else item)
    return ItemChange(sequence_number, kind, key, new, old, AT)


def post_item(delivery: Delivery = Delivery.FANOUT) -> dict[str, object]:
    return items.post_item(feed_builders.post("U100", delivery=delivery))


def follow_item() -> dict[str, object]:
    return items.follow_item(feed_builders.follow("U400", "U100"))


@pytest.mark.parametrize(
    ("kind", "action"), [(ChangeKind.INSERT, FanoutAction.ADD), (ChangeKind.REMOVE, FanoutAction.REMOVE)]
)
def test_a_fanout_post_written_or_removed_makes_its_task(kind: ChangeKind, action: FanoutAction) -> None:
    # given
    item = post_item()
    # when
    tasks, failures = made_of([change(kind, item)], fanout_task)
    # then
    post = items.post_from(item)
    assert tasks == {"1": FanoutTask(action=action, entry=items.entry_of(post))}
    assert failures == {}


@pytest.mark.parametrize("kind", [ChangeKind.INSERT, ChangeKind.REMOVE])
def test_a_pulled_post_makes_no_task(kind: ChangeKind) -> None:
    assert made_of([change(kind, post_item(Delivery.PULL))], fanout_task) == ({}, {})


def test_a_post_modified_by_its_counters_makes_no_task_and_counts_nothing() -> None:
    modified = change(ChangeKind.MODIFY, post_item())
    assert made_of([modified], fanout_task) == ({}, {})
    assert counted_on_profiles(modified) == []


def test_an_unreadable_post_fails_its_record() -> None:
    # given
    item = {k: v for k, v in post_item().items() if k != "author_id"}
    # when
    tasks, failures = made_of([change(ChangeKind.INSERT, item)], fanout_task)
    # then
    assert tasks == {}
    assert list(failures) == ["1"]


@pytest.mark.parametrize(("kind", "sign"), [(ChangeKind.INSERT, 1), (ChangeKind.REMOVE, -1)])
def test_a_follow_counts_on_both_profiles_and_its_removal_takes_it_back(kind: ChangeKind, sign: int) -> None:
    assert counted_on_profiles(change(kind, follow_item())) == [
        Increment(keys.profile("U100"), items.FOLLOWERS_COUNT, sign),
        Increment(keys.profile("U400"), items.FOLLOWING_COUNT, sign),
    ]


@pytest.mark.parametrize(("kind", "sign"), [(ChangeKind.INSERT, 1), (ChangeKind.REMOVE, -1)])
def test_a_post_counts_on_its_authors_profile_whatever_its_delivery(kind: ChangeKind, sign: int) -> None:
    for delivery in Delivery:
        assert counted_on_profiles(change(kind, post_item(delivery))) == [
            Increment(keys.profile("U100"), items.POSTS_COUNT, sign)
        ]


@pytest.mark.parametrize(
    ("kind", "action"), [(ChangeKind.INSERT, FollowAction.BACKFILL), (ChangeKind.REMOVE, FollowAction.CLEANUP)]
)
def test_a_follow_written_or_removed_makes_its_feed_task(kind: ChangeKind, action: FollowAction) -> None:
    assert follow_task(change(kind, follow_item())) == FollowTask(action=action, follower_id="U400", author_id="U100")


def test_a_follow_modified_makes_no_feed_task() -> None:
    assert follow_task(change(ChangeKind.MODIFY, follow_item())) is None
