"""The outbox sweeper against moto: what the stream relay left unpublished is re-driven to the bus."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from functions.commerce_stream.app import lambda_handler as commerce_stream
from functions.outbox_sweeper.app import lambda_handler as outbox_sweeper
from local.harness.apigw import sample
from local.harness.client import ApiClient
from local.harness.factories import SteppingClock
from shopfeed.commerce import items
from shopfeed.commerce.orders import services
from shopfeed.platform.publisher import EventBusUnavailable
from tests.integration.outbox_support import (
    STREAM_FUNCTION,
    SWEEPER_FUNCTION,
    CommerceStream,
    EventBridgeOutage,
    EventBridgeRefusals,
    Subscriber,
    batch,
    event_at,
    event_id,
    failed_sequence_numbers,
    outbox_inserts,
    place_orders,
    redelivery,
    stable_id,
    unpublished,
    write_outbox_item,
)

# The template's OutboxSweepAfterSeconds default, which OutboxSweeperSettings mirrors.
SWEEP_AFTER = timedelta(seconds=300)


@pytest.fixture
def ten_minutes_ago(monkeypatch: pytest.MonkeyPatch) -> None:
    """Orders placed and cancelled ten minutes ago: their events are past the sweep threshold."""
    monkeypatch.setattr(services, "utc_now", SteppingClock(datetime.now(UTC) - timedelta(minutes=10)))


def sweep() -> dict[str, int]:
    return outbox_sweeper(sample("schedules/outbox_sweep.json"), SWEEPER_FUNCTION)


def relay(records: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(commerce_stream(batch(records), STREAM_FUNCTION))


@pytest.mark.usefixtures("shop", "ten_minutes_ago")
def test_with_eventbridge_refusing_a_third_every_event_arrives_and_nothing_stays_unpublished(
    commerce_api: ApiClient, subscriber: Subscriber, stream: CommerceStream
) -> None:
    # given: six orders, two of them cancelled; EventBridge refuses every third event on its first two
    # attempts, so the stream delivery and its retry leave those events unpublished
    order_ids = place_orders(commerce_api, 6)
    for order_id in order_ids[:2]:
        assert commerce_api.post(f"/orders/{order_id}/cancel").status == 200
    records = outbox_inserts(stream.read())
    written = {event_id(record) for record in records}
    with EventBridgeRefusals(every=3, attempts=2) as refusals:
        first = relay(records)
        retried = relay(redelivery(records, first))
        assert failed_sequence_numbers(retried) == failed_sequence_numbers(first)
        left_behind = unpublished()
        # when: the schedule fires
        counts = sweep()
    # then
    assert len(written) == 8
    assert len(left_behind) == 2  # the third and the sixth
    assert sorted(set(refusals.refused)) == left_behind
    assert counts == {"found": len(left_behind), "published": len(left_behind), "failed": 0}
    assert unpublished() == []
    delivered = subscriber.receive()
    assert {stable_id(event) for event in delivered} == written
    details_by_id: dict[str, list[dict[str, Any]]] = {}
    for event in delivered:
        details_by_id.setdefault(stable_id(event), []).append(event["detail"])
    assert all(details == [details[0]] * len(details) for details in details_by_id.values())


@pytest.mark.usefixtures("shop", "subscriber")
def test_the_sweeper_leaves_recent_events_to_the_stream_relay(commerce_api: ApiClient) -> None:
    # given: an order placed just now, its stream record not yet relayed
    place_orders(commerce_api, 1)
    # when
    counts = sweep()
    # then
    assert counts == {"found": 0, "published": 0, "failed": 0}
    assert len(unpublished()) == 1


@pytest.mark.usefixtures("shop", "ten_minutes_ago")
def test_a_poison_event_and_an_unreadable_item_stay_behind_without_holding_back_the_rest(
    commerce_api: ApiClient, subscriber: Subscriber
) -> None:
    # given: two orders whose stream records were lost, an event too large for EventBridge, and an
    # outbox item that no longer maps to an event
    place_orders(commerce_api, 2)
    long_ago = datetime.now(UTC) - timedelta(hours=1)
    poison = event_at(long_ago, note="x" * 300_000)
    write_outbox_item(items.outbox_item(poison))
    unreadable = event_at(long_ago)
    write_outbox_item({k: v for k, v in items.outbox_item(unreadable).items() if k != "event_type"})
    # when
    counts = sweep()
    # then
    assert counts == {"found": 4, "published": 2, "failed": 2}
    assert [event["detail-type"] for event in subscriber.receive()] == ["OrderPlaced", "OrderPlaced"]
    assert unpublished() == sorted([poison.event_id, unreadable.event_id])


@pytest.mark.usefixtures("shop", "subscriber", "ten_minutes_ago")
def test_a_second_sweep_finds_nothing_left(commerce_api: ApiClient) -> None:
    # given
    place_orders(commerce_api, 3)
    assert sweep() == {"found": 3, "published": 3, "failed": 0}
    # when
    counts = sweep()
    # then
    assert counts == {"found": 0, "published": 0, "failed": 0}


@pytest.mark.usefixtures("shop", "subscriber", "ten_minutes_ago")
def test_an_eventbridge_outage_fails_the_sweep_and_leaves_everything_for_the_next_one(
    commerce_api: ApiClient,
) -> None:
    # given
    place_orders(commerce_api, 2)
    # when: the scheduler retries the invocation (RetryPolicy), the next schedule sweeps again
    with EventBridgeOutage(), pytest.raises(EventBusUnavailable):
        sweep()
    # then
    assert len(unpublished()) == 2
    assert sweep() == {"found": 2, "published": 2, "failed": 0}
