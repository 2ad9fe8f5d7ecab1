"""Stream consumers against moto's real stream records: REMOVE records, unrouted types, and
exactly-once effects of batches delivered again."""

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import pytest
from boto3.dynamodb.conditions import Attr

from functions.commerce_stream.app import lambda_handler
from local.harness.builders import customer
from local.harness.client import ApiClient
from local.harness.factories import create_product
from local.harness.tables import table_items
from shopfeed.commerce import items, keys
from shopfeed.commerce.models import Product
from shopfeed.platform import clients, dynamo, exactly_once, streams
from tests.integration.outbox_support import (
    STREAM_FUNCTION,
    CommerceStream,
    Subscriber,
    batch,
    event_at,
    failed_sequence_numbers,
    redelivery,
    sequence_numbers,
    write_outbox_item,
)

NOW = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)


def emitted_metrics(output: str) -> dict[str, float]:
    """The metric values Powertools flushed as CloudWatch EMF lines on stdout."""
    values: dict[str, float] = {}
    for line in output.splitlines():
        if line.startswith("{") and '"_aws"' in line:
            document = json.loads(line)
            for directive in document["_aws"]["CloudWatchMetrics"]:
                for metric in directive["Metrics"]:
                    value = document[metric["Name"]]
                    values[metric["Name"]] = sum(value) if isinstance(value, list) else value
    return values


# -- REMOVE records --------------------------------------------------------------------------------


def test_a_remove_record_reaches_its_handler_with_the_old_image(admin: ApiClient) -> None:
    # given: a product deleted from the table (a REMOVE record has no new image)
    create_product(admin, "P-RED-TSHIRT", available=4)
    stream = CommerceStream()
    stream.read()
    clients.dynamodb().delete_item(TableName="CommerceTable", Key=dynamo.serialize(keys.product("P-RED-TSHIRT")))
    received: list[tuple[streams.ChangeKind, Product]] = []

    def removed_products(changes: Sequence[streams.ItemChange]) -> Mapping[str, Exception]:
        parsed, failures = streams.parse_images(changes, items.product_from)
        received.extend((change.kind, parsed[change.sequence_number]) for change in changes)
        return failures

    # when
    response = streams.handle_batch(batch(stream.read()), {items.PRODUCT: removed_products})

    # then (its stock is in its bucket, not on the item)
    assert response == {"batchItemFailures": []}
    [(kind, product)] = received
    assert (kind, product.product_id, product.available) == (streams.ChangeKind.REMOVE, "P-RED-TSHIRT", 0)


@pytest.mark.usefixtures("aws")
def test_an_outbox_item_expiring_passes_through_the_commerce_consumer_without_publishing(
    subscriber: Subscriber,
) -> None:
    # given: an outbox item written, then removed as TTL removes it
    event = event_at(NOW)
    write_outbox_item(items.outbox_item(event))
    stream = CommerceStream()
    stream.read()
    clients.dynamodb().delete_item(TableName="CommerceTable", Key=dynamo.serialize(keys.outbox(event.event_id)))
    [removal] = stream.read()
    assert removal["eventName"] == "REMOVE"
    assert "NewImage" not in removal["dynamodb"]

    # when
    response = lambda_handler(batch([removal]), STREAM_FUNCTION)

    # then: acknowledged, and nothing published for an event that expired
    assert response == {"batchItemFailures": []}
    assert subscriber.receive() == []


# -- records without a route -----------------------------------------------------------------------


@pytest.mark.usefixtures("subscriber")
def test_a_record_of_a_type_without_a_route_is_logged_and_counted_not_silently_acknowledged(
    admin: ApiClient, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    # given: a customer record, which the commerce consumer has no handler for
    stream = CommerceStream()
    clients.dynamodb().put_item(TableName="CommerceTable", Item=dynamo.serialize(items.customer_item(customer())))
    records = stream.read()
    assert [json.loads(json.dumps(r))["dynamodb"]["NewImage"]["entity_type"]["S"] for r in records] == ["Customer"]
    capsys.readouterr()

    # when
    response = lambda_handler(batch(records), STREAM_FUNCTION)

    # then: acknowledged (failing it would stall the shard), but visible to operators
    assert response == {"batchItemFailures": []}
    output = capsys.readouterr().out
    assert emitted_metrics(output)[streams.UNROUTED_METRIC] == 1
    logged = [record for record in caplog.records if record.getMessage() == "stream record has no handler"]
    assert [(record.levelname, record.__dict__["entity_type"]) for record in logged] == [("ERROR", "Customer")]


# -- exactly-once effects ----------------------------------------------------------------------------


def stock_counted(changes: Sequence[streams.ItemChange]) -> dict[str, list[streams.ItemChange]]:
    by_product: dict[str, list[streams.ItemChange]] = {}
    for change in changes:
        by_product.setdefault(str((change.image or {})["product_id"]), []).append(change)
    return by_product


def mark_key(target: str, change: streams.ItemChange) -> dict[str, str]:
    # A test-only key format: the feed's keys.py declares its own.
    return {"PK": f"TEST-MARK#{target}", "SK": change.sequence_number}


def counter_handler(table: dynamo.Table) -> streams.RecordTypeHandler:
    """Counts, per product, how many times it was written: one ADD per product per batch."""

    def count(changes: Sequence[streams.ItemChange]) -> Mapping[str, Exception]:
        def write(product_id: str) -> exactly_once.Write:
            return lambda applied: table.update_op(
                {"PK": f"TEST-COUNTER#{product_id}", "SK": "COUNT"}, dynamo.Update(add={"writes": len(applied)})
            )

        effects = [
            exactly_once.Effect(product_id, product_changes, write(product_id))
            for product_id, product_changes in stock_counted(changes).items()
        ]
        return exactly_once.apply_once(table, mark_key, effects, NOW)

    return count


def counters() -> dict[str, int]:
    return {
        item["PK"].removeprefix("TEST-COUNTER#"): item["writes"]
        for item in table_items()
        if item["PK"].startswith("TEST-COUNTER#")
    }


def test_a_batch_aggregated_counter_is_exact_when_a_batch_is_delivered_again(admin: ApiClient) -> None:
    # given: three writes to one product and one to another, counted once
    stream = CommerceStream()
    create_product(admin, "P-RED-TSHIRT")
    create_product(admin, "P-BLUE-MUG")
    for available in (5, 6):
        admin.patch(
            "/products/P-RED-TSHIRT", {"name": f"Shirt {available}"}, headers={"If-Match": f'"{available - 4}"'}
        )
    records = stream.read()
    table = dynamo.Table(clients.dynamodb(), "CommerceTable")
    handler = counter_handler(table)
    assert streams.handle_batch(batch(records), {items.PRODUCT: handler}) == {"batchItemFailures": []}

    # when: the same batch again, then its second half again (a partial-batch retry)
    again = streams.handle_batch(batch(records), {items.PRODUCT: handler})
    tail = streams.handle_batch(batch(records[2:]), {items.PRODUCT: handler})

    # then
    assert again == tail == {"batchItemFailures": []}
    assert counters() == {"P-RED-TSHIRT": 3, "P-BLUE-MUG": 1}


def test_records_not_yet_applied_are_applied_once_next_to_ones_already_applied(admin: ApiClient) -> None:
    # given: the first record counted alone, then the whole batch delivered
    stream = CommerceStream()
    create_product(admin, "P-RED-TSHIRT")
    admin.patch("/products/P-RED-TSHIRT", {"name": "Shirt"}, headers={"If-Match": '"1"'})
    records = stream.read()
    table = dynamo.Table(clients.dynamodb(), "CommerceTable")
    streams.handle_batch(batch(records[:1]), {items.PRODUCT: counter_handler(table)})

    # when
    response = streams.handle_batch(batch(records), {items.PRODUCT: counter_handler(table)})

    # then: one write for the batch, counting only the record not applied before
    assert response == {"batchItemFailures": []}
    assert counters() == {"P-RED-TSHIRT": 2}


def test_an_effect_whose_own_condition_fails_fails_its_records_and_leaves_no_mark(admin: ApiClient) -> None:
    # given: a write guarded on an item that does not exist
    stream = CommerceStream()
    create_product(admin, "P-RED-TSHIRT")
    # the product's record (its stock layout and bucket, written with it, are records of other types)
    records = [r for r in stream.read() if r["dynamodb"]["Keys"]["SK"]["S"] == keys.META]
    table = dynamo.Table(clients.dynamodb(), "CommerceTable")

    def refused(changes: Sequence[streams.ItemChange]) -> Mapping[str, Exception]:
        effect = exactly_once.Effect(
            "ghost",
            changes,
            lambda applied: table.update_op(
                {"PK": "TEST-COUNTER#ghost", "SK": "COUNT"},
                dynamo.Update(add={"writes": len(applied)}),
                condition=Attr("PK").exists(),
            ),
        )
        return exactly_once.apply_once(table, mark_key, [effect], NOW)

    # when
    response = streams.handle_batch(batch(records), {items.PRODUCT: refused})

    # then
    assert failed_sequence_numbers(response) == sequence_numbers(records)
    assert [item for item in table_items() if item["PK"].startswith("TEST-")] == []
    assert redelivery(records, response) == records


def test_skip_applied_leaves_out_records_whose_effect_is_already_there() -> None:
    # given: two changes, the first already applied according to the state it left
    changes = [
        streams.ItemChange(str(n), streams.ChangeKind.INSERT, {"PK": str(n)}, {"n": n}, None, NOW) for n in (1, 2)
    ]
    seen: list[list[str]] = []

    def handler(batch_changes: Sequence[streams.ItemChange]) -> Mapping[str, Exception]:
        seen.append([change.sequence_number for change in batch_changes])
        return {}

    # when
    failures = exactly_once.skip_applied(handler, lambda _: {"1"})(changes)

    # then
    assert failures == {}
    assert seen == [["2"]]
