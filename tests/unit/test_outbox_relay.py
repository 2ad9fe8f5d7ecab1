"""The outbox use cases, relay and sweep, against the in-memory outbox and bus."""

from datetime import datetime, timedelta

import pytest

from local.harness.builders import NOW, euros, order
from shopfeed.commerce import events
from shopfeed.platform import outbox_relay
from shopfeed.platform.clock import iso
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.publisher import EventBusUnavailable
from tests.unit.outbox_fakes import InMemoryBus, InMemoryOutbox, UnreachableBus

SWEEP_AFTER = timedelta(minutes=5)


def placed(at: datetime = NOW) -> OutboxEvent:
    return events.order_placed(order([("P-RED-TSHIRT", 1, euros(1999))], placed=at))


def ids(published: list[OutboxEvent]) -> list[str]:
    return [event.event_id for event in published]


# -- relay ------------------------------------------------------------------------------------------


def test_relay_publishes_each_event_in_its_envelope_and_marks_it_published() -> None:
    # given
    written = [placed(), placed()]
    store, bus = InMemoryOutbox(written), InMemoryBus()
    # when
    report = outbox_relay.relay(written, bus, store, NOW)
    # then
    assert report.published == tuple(ids(written))
    assert not report.failures
    assert bus.delivered == [
        {
            "metadata": {
                "event_id": event.event_id,
                "event_type": "OrderPlaced",
                "occurred_at": event.occurred_at,
                "aggregate_id": event.aggregate_id,
            },
            "data": event.detail,
        }
        for event in written
    ]
    assert store.unpublished() == []
    assert all(store.published_at(event.event_id) == iso(NOW) for event in written)


def test_relay_reports_refused_events_and_leaves_only_them_unpublished() -> None:
    # given
    written = [placed(), placed(), placed()]
    refused = written[1].event_id
    store, bus = InMemoryOutbox(written), InMemoryBus(refuse={refused})
    # when
    report = outbox_relay.relay(written, bus, store, NOW)
    # then
    assert report.published == (written[0].event_id, written[2].event_id)
    assert list(report.failures) == [refused]
    assert report.failures[refused].code == "InternalFailure"
    assert store.unpublished() == [refused]


def test_relaying_nothing_makes_no_call() -> None:
    # given
    bus = InMemoryBus()
    # when
    report = outbox_relay.relay([], bus, InMemoryOutbox(), NOW)
    # then
    assert bus.calls == []
    assert report.published == ()


def test_relay_marks_nothing_when_the_bus_is_unreachable() -> None:
    # given
    written = [placed(), placed()]
    store = InMemoryOutbox(written)
    # when
    with pytest.raises(EventBusUnavailable):
        outbox_relay.relay(written, UnreachableBus(), store, NOW)
    # then
    assert store.unpublished() == sorted(ids(written))


def test_relaying_an_event_again_keeps_its_first_publication_time() -> None:
    # given: a stream redelivery after the event was already published and marked
    event = placed()
    store, bus = InMemoryOutbox([event]), InMemoryBus()
    outbox_relay.relay([event], bus, store, NOW)
    # when
    outbox_relay.relay([event], bus, store, NOW + timedelta(minutes=1))
    # then: delivered twice under one id, published once
    assert bus.delivered_ids() == [event.event_id, event.event_id]
    assert store.published_at(event.event_id) == iso(NOW)


# -- sweep ------------------------------------------------------------------------------------------


def test_sweep_republishes_only_events_unpublished_for_longer_than_the_threshold() -> None:
    # given
    stale = placed(NOW - SWEEP_AFTER - timedelta(seconds=1))
    fresh = placed(NOW - SWEEP_AFTER + timedelta(seconds=1))
    store, bus = InMemoryOutbox([stale, fresh]), InMemoryBus()
    # when
    report = outbox_relay.sweep(bus, store, NOW, SWEEP_AFTER)
    # then: the fresh one is still the stream relay's to publish
    assert report.counts == {"found": 1, "published": 1, "failed": 0}
    assert bus.delivered_ids() == [stale.event_id]
    assert store.unpublished() == [fresh.event_id]


def test_sweep_reports_refused_and_unreadable_events_and_leaves_them_for_the_next_sweep() -> None:
    # given
    good, refused = placed(NOW - timedelta(hours=1)), placed(NOW - timedelta(hours=1))
    store, bus = InMemoryOutbox([good, refused]), InMemoryBus(refuse={refused.event_id})
    store.add_unreadable("01JQ8Z6V4C0000000000000000", iso(NOW - timedelta(hours=2)))
    # when
    report = outbox_relay.sweep(bus, store, NOW, SWEEP_AFTER)
    # then
    assert report.counts == {"found": 3, "published": 1, "failed": 2}
    assert report.published == (good.event_id,)
    assert report.failures["01JQ8Z6V4C0000000000000000"].code == outbox_relay.UNREADABLE
    assert store.unpublished() == sorted(["01JQ8Z6V4C0000000000000000", refused.event_id])


def test_sweep_publishes_a_backlog_in_pages() -> None:
    # given
    backlog = [placed(NOW - timedelta(hours=3) + timedelta(seconds=n)) for n in range(250)]
    store, bus = InMemoryOutbox(backlog), InMemoryBus()
    # when
    report = outbox_relay.sweep(bus, store, NOW, SWEEP_AFTER, page=100)
    # then
    assert [len(call) for call in bus.calls] == [100, 100, 50]
    assert report.counts == {"found": 250, "published": 250, "failed": 0}
    assert store.unpublished() == []


def test_after_a_sweep_every_refused_relay_event_is_published_once_more_under_its_own_id() -> None:
    # given: the stream relay had a third of its events refused, and its retries gave up
    written = [placed(NOW - timedelta(minutes=10)) for _ in range(6)]
    refused = {event.event_id for event in written[2::3]}
    store, bus = InMemoryOutbox(written), InMemoryBus(refuse=set(refused))
    outbox_relay.relay(written, bus, store, NOW - timedelta(minutes=10))
    # when: the bus has recovered by the time the sweeper runs
    bus.refuse.clear()
    report = outbox_relay.sweep(bus, store, NOW, SWEEP_AFTER)
    # then
    assert set(report.published) == refused
    assert sorted(bus.delivered_ids()) == sorted(ids(written))
    assert store.unpublished() == []
    assert outbox_relay.sweep(bus, store, NOW, SWEEP_AFTER).counts == {"found": 0, "published": 0, "failed": 0}
