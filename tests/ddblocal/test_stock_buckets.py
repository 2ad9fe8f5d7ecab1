"""Orders racing for a product whose stock is split into buckets (issue 18), through the real handler,
one container (process) per share of the orders, against DynamoDB Local: no unit is sold twice, none
is lost, and an order is refused only when no bucket (nor all of them together) holds enough."""

from collections import Counter

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, idempotency_key, line, order_body, place_order
from local.harness.race import CONTENTION, Call, in_containers, settled
from shopfeed.commerce import bootstrap, events, items
from shopfeed.commerce.models import DEFAULT_WAREHOUSE
from tests.ddblocal.conftest import StoredItems

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

INSUFFICIENT_STOCK = "https://shopfeed.dev/problems/insufficient-stock"
UNAVAILABLE = "https://shopfeed.dev/problems/dependency-unavailable"
PRODUCT = "P-FLASH"
EAST = "WH-EAST"


def spread(admin: ApiClient, units_per_warehouse: int, buckets: int) -> None:
    """``PRODUCT`` with ``units_per_warehouse`` in each of two warehouses, ``buckets`` buckets each."""
    create_product(admin, PRODUCT, available=units_per_warehouse)
    stock = bootstrap.repository().stock
    stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, 1, restock=0, buckets=buckets)
    stock.adjust_warehouse(PRODUCT, EAST, 2, restock=units_per_warehouse, buckets=buckets)


def test_five_hundred_orders_for_a_hundred_units_in_ten_buckets_sell_exactly_a_hundred(
    admin: ApiClient, stored: StoredItems
) -> None:
    # given 100 units over 10 buckets in 2 warehouses, 10 in each bucket
    spread(admin, 50, 5)
    initial = {(b["warehouse"], int(b["bucket"])): int(b["available"]) for b in stored.of(items.STOCK_BUCKET)}
    assert sorted(initial.values()) == [10] * 10

    # when 500 orders of one unit each are placed by 50 containers at once (10 each, in a row)
    shares = [
        [Call("POST", "/orders", order_body(line(PRODUCT)), idempotency_key(), sub=f"U{c:02d}{n}") for n in range(10)]
        for c in range(50)
    ]
    served = in_containers(shares, warm_up=Call("GET", f"/products/{PRODUCT}"))
    calls = [call for share in shares for call in share]
    answers = [one.answer for share in served for one in share]
    # a 409 contention or a 503 says "send it again": a client doing so, with the same key, ends with
    # an order or insufficient-stock (on this machine 50 containers and DynamoDB Local share 2 cores,
    # and calls run out of their budget)
    retried = [settled(admin, call, answer) for call, answer in zip(calls, answers, strict=True)]

    # then exactly 100 orders were placed, every other one refused as out of stock
    placed = [a.json for a in retried if a.status == 201]
    refused = [a for a in retried if a.status != 201]
    assert len(placed) == 100
    assert {a.status for a in refused} == {409}
    assert {a.json["type"] for a in refused} == {INSUFFICIENT_STOCK}
    assert {a.json["type"] for a in answers if a.status != 201} <= {INSUFFICIENT_STOCK, CONTENTION, UNAVAILABLE}

    # and every bucket is empty, never below zero, and what each bucket holds plus what the stored
    # order lines say they took from it is what it held: no unit sold twice, none lost
    buckets = {(b["warehouse"], int(b["bucket"])): int(b["available"]) for b in stored.of(items.STOCK_BUCKET)}
    assert buckets == dict.fromkeys(initial, 0)
    taken: Counter[tuple[str, int]] = Counter()
    for order_line in stored.of(items.ORDER_LINE):
        for take in order_line["takes"]:
            taken[(take["warehouse"], int(take["bucket"]))] += int(take["quantity"])
    assert {ref: buckets[ref] + taken[ref] for ref in initial} == initial
    placed_ids = sorted(order["order_id"] for order in placed)
    assert sorted(order["order_id"] for order in stored.of(items.ORDER)) == placed_ids
    outbox = stored.of(items.OUTBOX_EVENT, event_type=events.ORDER_PLACED)
    assert sorted(event["aggregate_id"] for event in outbox) == placed_ids


def test_an_order_no_single_bucket_can_serve_is_split_and_one_larger_than_all_is_refused(
    admin: ApiClient, stored: StoredItems
) -> None:
    # given 100 units over 10 buckets: every bucket holds 10
    spread(admin, 50, 5)

    # when 95 are ordered, then no bucket alone holds them, yet the order is placed from ten buckets
    answer = place_order(admin, line(PRODUCT, 95))
    assert answer.status == 201, answer.text
    [order_line] = stored.of(items.ORDER_LINE)
    assert sum(int(t["quantity"]) for t in order_line["takes"]) == 95
    assert len(order_line["takes"]) == 10

    # and 6 more (5 are left, none in a bucket of 6) are refused naming the 5 there are
    refused = place_order(admin, line(PRODUCT, 6))
    assert (refused.status, refused.json["type"]) == (409, INSUFFICIENT_STOCK)
    assert refused.json["products"] == [{"product_id": PRODUCT, "requested": 6, "available": 5}]
    assert sum(int(b["available"]) for b in stored.of(items.STOCK_BUCKET)) == 5
