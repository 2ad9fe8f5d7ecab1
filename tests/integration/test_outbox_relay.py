"""The outbox relay against moto: orders placed through the API, CommerceTable's real stream records fed
to the stream consumer as Lambda would, the template's event bus delivering to its subscriber queue."""

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from functions.commerce_stream.app import lambda_handler
from local.harness.apigw import sample
from local.harness.client import ApiClient
from local.harness.factories import line, placed_order
from local.harness.tables import table_items
from shopfeed.commerce import items
from shopfeed.platform import clients, dynamo, outbox_relay
from shopfeed.platform.clock import epoch_seconds, iso
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.publisher import EventBridgePublisher, EventBusUnavailable
from tests.integration.outbox_support import (
    STREAM_FUNCTION,
    CommerceStream,
    EventBridgeOutage,
    EventBridgeRefusals,
    PutEventsLog,
    Subscriber,
    batch,
    event_at,
    event_id,
    failed_sequence_numbers,
    outbox_inserts,
    outbox_items,
    place_orders,
    redelivery,
    sequence_numbers,
    stable_id,
    unpublished,
    write_outbox_item,
)
from tests.support.calls import dynamodb_calls
from tests.unit.outbox_fakes import InMemoryBus, InMemoryOutbox

RETENTION = timedelta(days=7)  # CommerceStreamSettings.outbox_retention_days's default


def relay(records: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(lambda_handler(batch(records), STREAM_FUNCTION))


# -- relaying -------------------------------------------------------------------------------------


@pytest.mark.usefixtures("shop")
def test_an_order_placed_and_cancelled_reach_the_subscriber_with_their_outbox_ids_and_exact_detail(
    commerce_api: ApiClient, subscriber: Subscriber, stream: CommerceStream
) -> None:
    # given
    order_id = placed_order(commerce_api, line("P-RED-TSHIRT", 2))["order_id"]
    assert commerce_api.post(f"/orders/{order_id}/cancel").status == 200
    written = outbox_items()
    # when
    response = relay(stream.read())
    # then
    assert response == {"batchItemFailures": []}
    delivered = {event["detail-type"]: event for event in subscriber.receive()}
    assert sorted(delivered) == ["OrderCancelled", "OrderPlaced"]
    for event in delivered.values():
        stored = written[stable_id(event)]
        assert event["source"] == "shopfeed.commerce"
        assert event["detail"] == {
            "metadata": {
                "event_id": stored["event_id"],
                "event_type": stored["event_type"],
                "occurred_at": stored["occurred_at"],
                "aggregate_id": order_id,
            },
            "data": stored["detail"],
        }
    assert delivered["OrderPlaced"]["detail"]["data"]["total"] == {"amount": 3998, "currency": "EUR"}
    assert delivered["OrderCancelled"]["detail"]["data"]["restocked"] == [
        {"product_id": "P-RED-TSHIRT", "quantity": 2, "unit_price": {"amount": 1999, "currency": "EUR"}}
    ]


@pytest.mark.usefixtures("shop", "subscriber")
def test_a_published_event_leaves_the_unpublished_index_and_expires_after_the_retention(
    commerce_api: ApiClient, stream: CommerceStream
) -> None:
    # given
    place_orders(commerce_api, 1)
    before = datetime.now(UTC).replace(microsecond=0)
    # when
    relay(stream.read())
    # then
    assert unpublished() == []
    (item,) = outbox_items().values()
    published_at = datetime.fromisoformat(item["published_at"])
    assert before <= published_at <= datetime.now(UTC)
    assert item["expires_at"] == epoch_seconds(published_at + RETENTION)


@pytest.mark.usefixtures("shop")
def test_refused_entries_fail_only_their_records_and_the_redelivery_publishes_them_under_the_same_ids(
    commerce_api: ApiClient, subscriber: Subscriber, stream: CommerceStream
) -> None:
    # given: nine orders, and EventBridge refusing every third event the first time it sees it
    place_orders(commerce_api, 9)
    records = outbox_inserts(stream.read())
    # when
    with EventBridgeRefusals(every=3, attempts=1) as refusals:
        first = relay(records)
        second = relay(redelivery(records, first))
    # then: the first delivery reports exactly the refused records, in one PutEvents call
    refused = [record for record in records if event_id(record) in set(refusals.refused)]
    assert len(refused) == 3
    assert failed_sequence_numbers(first) == sequence_numbers(refused)
    assert second == {"batchItemFailures": []}
    assert refusals.calls[0] == 9
    # every event delivered at least once; a repeat carries the same id and the same detail
    delivered = subscriber.receive()
    assert {stable_id(event) for event in delivered} == {event_id(record) for record in records}
    by_id: dict[str, list[dict[str, Any]]] = {}
    for event in delivered:
        by_id.setdefault(stable_id(event), []).append(event["detail"])
    assert all(details == [details[0]] * len(details) for details in by_id.values())
    assert unpublished() == []


@pytest.mark.usefixtures("shop", "subscriber")
def test_a_batch_is_marked_published_in_one_transaction_after_one_read_of_what_is_already_published(
    commerce_api: ApiClient, stream: CommerceStream
) -> None:
    # given
    place_orders(commerce_api, 25)
    records = outbox_inserts(stream.read())
    # when
    with dynamodb_calls() as calls:
        response = relay(records)
    # then: BatchGetItem (skip what a previous delivery published), then one TransactWriteItems for 25 marks
    assert response == {"batchItemFailures": []}
    assert calls.operations == ["BatchGetItem", "TransactWriteItems"]
    assert unpublished() == []


@pytest.mark.usefixtures("shop")
def test_a_batch_delivered_again_after_it_was_published_publishes_nothing_twice(
    commerce_api: ApiClient, subscriber: Subscriber, stream: CommerceStream
) -> None:
    # given: a batch relayed once
    place_orders(commerce_api, 3)
    records = outbox_inserts(stream.read())
    relay(records)
    assert len(subscriber.receive()) == 3
    # when: Lambda delivers it again (a partial-batch retry of an earlier record, a duplicate invocation)
    with PutEventsLog() as log:
        response = relay(records)
    # then
    assert response == {"batchItemFailures": []}
    assert log.calls == []
    assert subscriber.receive() == []


@pytest.mark.usefixtures("shop", "subscriber")
def test_each_entry_carries_the_x_ray_trace_header_of_the_invocation(
    commerce_api: ApiClient, stream: CommerceStream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: Lambda's trace header of the running invocation
    trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
    monkeypatch.setenv("_X_AMZN_TRACE_ID", trace)
    place_orders(commerce_api, 12)
    records = outbox_inserts(stream.read())
    # when
    with PutEventsLog() as log:
        relay(records)
    # then
    assert log.calls == [10, 2]
    assert [entry["TraceHeader"] for entry in log.entries] == [trace] * 12


@pytest.mark.usefixtures("shop", "subscriber")
def test_twenty_five_events_go_out_in_put_events_calls_of_at_most_ten(
    commerce_api: ApiClient, stream: CommerceStream
) -> None:
    # given
    place_orders(commerce_api, 25)
    records = outbox_inserts(stream.read())
    # when
    with PutEventsLog() as log:
        response = relay(records)
    # then
    assert response == {"batchItemFailures": []}
    assert log.calls == [10, 10, 5]
    assert unpublished() == []


@pytest.mark.usefixtures("shop")
def test_an_event_too_large_for_eventbridge_fails_only_its_own_record(
    commerce_api: ApiClient, subscriber: Subscriber, stream: CommerceStream
) -> None:
    # given: a poison event (over PutEvents' 256 KiB) between two orders
    place_orders(commerce_api, 1)
    poison = event_at(datetime.now(UTC), note="x" * 300_000)
    write_outbox_item(items.outbox_item(poison))
    place_orders(commerce_api, 1)
    records = stream.read()
    # when
    response = relay(records)
    # then
    poison_record = next(record for record in outbox_inserts(records) if event_id(record) == poison.event_id)
    assert failed_sequence_numbers(response) == sequence_numbers([poison_record])
    assert len(subscriber.receive()) == 2
    assert unpublished() == [poison.event_id]


@pytest.mark.usefixtures("shop")
def test_a_malformed_outbox_record_fails_only_itself(
    commerce_api: ApiClient, subscriber: Subscriber, stream: CommerceStream
) -> None:
    # given: an outbox item without its detail (written by hand, say), after a real order
    place_orders(commerce_api, 1)
    malformed = event_at(datetime.now(UTC))
    write_outbox_item({k: v for k, v in items.outbox_item(malformed).items() if k != "detail"})
    records = stream.read()
    # when
    response = relay(records)
    # then
    malformed_record = next(record for record in outbox_inserts(records) if event_id(record) == malformed.event_id)
    assert failed_sequence_numbers(response) == sequence_numbers([malformed_record])
    assert [event["detail-type"] for event in subscriber.receive()] == ["OrderPlaced"]


@pytest.mark.usefixtures("shop", "subscriber")
def test_a_record_that_is_no_stream_record_fails_only_itself(commerce_api: ApiClient, stream: CommerceStream) -> None:
    # given
    place_orders(commerce_api, 1)
    records = stream.read()
    broken = json.loads(json.dumps(outbox_inserts(records)[0]))
    broken["eventName"] = "UPSERT"
    broken["dynamodb"]["SequenceNumber"] = str(int(records[-1]["dynamodb"]["SequenceNumber"]) + 1)
    # when
    response = relay([*records, broken])
    # then
    assert failed_sequence_numbers(response) == sequence_numbers([broken])
    assert unpublished() == []


@pytest.mark.usefixtures("shop")
def test_the_relay_ignores_the_modifications_it_makes_when_marking_published(
    commerce_api: ApiClient, subscriber: Subscriber, stream: CommerceStream
) -> None:
    # given: the events relayed once, which wrote one MODIFY per outbox item to the stream
    place_orders(commerce_api, 2)
    relay(stream.read())
    subscriber.receive()
    modifications = stream.read()
    assert [record["eventName"] for record in modifications] == ["MODIFY", "MODIFY"]
    # when
    response = relay(modifications)
    # then
    assert response == {"batchItemFailures": []}
    assert subscriber.receive() == []


@pytest.mark.usefixtures("shop", "subscriber")
def test_an_eventbridge_outage_fails_the_invocation_and_marks_nothing(
    commerce_api: ApiClient, stream: CommerceStream
) -> None:
    # given
    place_orders(commerce_api, 2)
    records = stream.read()
    # when: the whole batch is retried by Lambda (and bisected) rather than acknowledged
    with EventBridgeOutage(), pytest.raises(EventBusUnavailable):
        relay(records)
    # then
    assert len(unpublished()) == 2


def test_the_sample_stream_event_is_relayed(subscriber: Subscriber) -> None:
    # given: the outbox item the sample record reports
    event = sample("streams/commerce_outbox_order_placed.json")
    clients.dynamodb().put_item(TableName="CommerceTable", Item=event["Records"][0]["dynamodb"]["NewImage"])
    # when
    response = lambda_handler(event, STREAM_FUNCTION)
    # then
    assert response == {"batchItemFailures": []}
    (delivered,) = subscriber.receive()
    assert stable_id(delivered) == "01M81B5H80VT7TZWRY7NSHD6TE"
    assert delivered["detail"]["data"]["order_id"] == "01M81B5H80596QMENX0MEX0VN5"
    assert unpublished() == []


# -- the fakes keep to the real adapters' contract ------------------------------------------------


@dataclass
class OutboxUnderTest:
    port: outbox_relay.Outbox
    write: Callable[[OutboxEvent], None]


@pytest.fixture(params=["in-memory", "dynamodb"])
def outbox_under_test(request: pytest.FixtureRequest, aws: None) -> OutboxUnderTest:
    if request.param == "in-memory":
        fake = InMemoryOutbox()
        return OutboxUnderTest(fake, fake.add)
    real = outbox_relay.OutboxRepository(dynamo.Table(clients.dynamodb(), "CommerceTable"), items.OUTBOX, RETENTION)
    return OutboxUnderTest(real, lambda event: write_outbox_item(items.outbox_item(event)))


NOW = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)


def test_an_outbox_lists_only_unpublished_events_older_than_the_threshold(outbox_under_test: OutboxUnderTest) -> None:
    # given: events spread over every write shard, one of them published
    old = [event_at(NOW - timedelta(minutes=10, seconds=n)) for n in range(12)]
    recent = event_at(NOW - timedelta(minutes=1))
    for event in [*old, recent]:
        outbox_under_test.write(event)
    outbox_under_test.port.mark_published([old[0].event_id], NOW)
    # when
    listed = list(outbox_under_test.port.list_unpublished(NOW - timedelta(minutes=5)))
    # then
    assert sorted(event.event_id for event in listed) == sorted(event.event_id for event in old[1:])
    assert next(event for event in listed if event.event_id == old[1].event_id) == old[1]


def test_marking_an_event_published_twice_is_harmless_and_a_missing_one_is_never_created(
    outbox_under_test: OutboxUnderTest,
) -> None:
    # given
    event = event_at(NOW - timedelta(minutes=10))
    outbox_under_test.write(event)
    # when
    first = outbox_under_test.port.mark_published([event.event_id], NOW)
    again = outbox_under_test.port.mark_published([event.event_id], NOW + timedelta(minutes=1))
    missing = outbox_under_test.port.mark_published(["01JQ8Z6V4C0000000000000000"], NOW)
    # then
    assert (first, again, missing) == ({event.event_id}, {event.event_id}, set())
    assert list(outbox_under_test.port.list_unpublished(NOW)) == []


def test_marking_a_batch_marks_the_events_that_exist_and_skips_one_ttl_removed(
    outbox_under_test: OutboxUnderTest,
) -> None:
    # given: three events, the middle one gone (TTL removed it)
    events = [event_at(NOW - timedelta(minutes=10, seconds=n)) for n in range(3)]
    for event in (events[0], events[2]):
        outbox_under_test.write(event)
    ids = [event.event_id for event in events]
    # when
    marked = outbox_under_test.port.mark_published(ids, NOW)
    # then
    assert marked == {ids[0], ids[2]}
    assert outbox_under_test.port.published(ids) == {ids[0], ids[2]}
    assert list(outbox_under_test.port.list_unpublished(NOW)) == []


def test_marking_twice_keeps_the_first_publication_time_in_dynamodb(aws: None) -> None:
    # given
    repository = outbox_relay.OutboxRepository(
        dynamo.Table(clients.dynamodb(), "CommerceTable"), items.OUTBOX, RETENTION
    )
    event = event_at(NOW - timedelta(minutes=10))
    write_outbox_item(items.outbox_item(event))
    # when
    repository.mark_published([event.event_id], NOW)
    repository.mark_published([event.event_id], NOW + timedelta(hours=1))
    # then
    item = outbox_items()[event.event_id]
    assert item["published_at"] == iso(NOW)
    assert item["expires_at"] == epoch_seconds(NOW + RETENTION)
    assert "01JQ8Z6V4C0000000000000000" not in {i.get("event_id") for i in table_items()}


def test_the_in_memory_bus_delivers_what_eventbridge_delivers(subscriber: Subscriber) -> None:
    # given
    published = [event_at(NOW), event_at(NOW + timedelta(seconds=1))]
    fake = InMemoryBus()
    real = EventBridgePublisher(clients.eventbridge(), subscriber.bus_name)
    # when
    reports = [fake.publish(published), real.publish(published)]
    # then
    assert reports[0] == reports[1]
    assert fake.delivered == [event["detail"] for event in subscriber.receive()]
