"""`sam local invoke` of the commerce workers that need DynamoDB only: the payment worker on the sample
message in events/sqs/ and the inventory snapshot on its schedule tick, in Lambda containers."""

import json
from typing import Any

import pytest

from local.harness import builders
from local.samlocal.sam import SamLocal
from shopfeed.commerce import items, keys
from shopfeed.commerce.models import Order
from shopfeed.platform import dynamo
from tests.samlocal.helpers import EVENTS, Tables, invoke

pytestmark = [pytest.mark.samlocal, pytest.mark.xdist_group("samlocal")]


def put(tables: Tables, item: dict[str, Any]) -> None:
    tables.client.put_item(TableName=tables.names["CommerceTable"], Item=dynamo.serialize(item))


def sample_attempt() -> dict[str, Any]:
    """The attempt the sample attempt record reports, as stored."""
    record = json.loads((EVENTS / "streams/commerce_payment_attempt_inserted.json").read_text())["Records"][0]
    return dynamo.deserialize(record["dynamodb"]["NewImage"])


def test_invoke_payment_worker_on_the_task_sample_pays_the_order(sam: SamLocal, tables: Tables) -> None:
    # given the sample's order (two t-shirts, 39.98 EUR: the sandbox approves) with its attempt in flight
    attempt = sample_attempt()
    placed = builders.order([("P-RED-TSHIRT", 2, builders.euros(1999))])
    order = Order.model_validate(placed.model_dump() | {"order_id": attempt["order_id"]})
    put(tables, items.order_item(order) | {items.PAYMENT_PENDING: attempt["attempt_id"]})
    for line in order.lines:
        put(tables, items.order_line_item(order, line))
    put(tables, attempt)

    # when
    result = invoke(sam, "PaymentWorkerFunction", "sqs/payment_task.json", tables)

    # then the order is Paid, the attempt Authorized, and the event waits in the outbox
    assert result == {"batchItemFailures": []}
    header = tables.item(keys.order(order.order_id))
    settled = tables.item(keys.payment_attempt(order.order_id, attempt["attempt_id"]))
    assert header is not None
    assert settled is not None
    assert (header["status"], items.PAYMENT_PENDING in header) == ("Paid", False)
    assert settled["status"] == "Authorized"
    assert [event["event_type"] for event in tables.entities(items.OUTBOX_EVENT)] == ["PaymentAuthorized"]
    proof = tables.item(keys.purchase("U100", "P-RED-TSHIRT"))
    assert proof is not None
    assert proof[items.PAID_ORDERS] == 1


def test_invoke_inventory_snapshot_on_its_tick_records_every_products_level(sam: SamLocal, tables: Tables) -> None:
    # given two products
    for product in (builders.product("P-RED-TSHIRT", available=7), builders.product("P-BLK-CAP", available=3)):
        # (stored as before stock buckets: the number on the item, which the snapshot reads too)
        put(tables, {**items.product_item(product), items.LEGACY_AVAILABLE: product.available})

    # when
    result = invoke(sam, "InventorySnapshotFunction", "schedules/inventory_snapshot.json", tables)

    # then
    assert result["products"] == 2
    levels = {item["product_id"]: item["available"] for item in tables.entities(items.INVENTORY_SNAPSHOT)}
    assert levels == {"P-RED-TSHIRT": 7, "P-BLK-CAP": 3}
