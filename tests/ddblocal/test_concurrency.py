"""Races through the real handler, one container (process) per request, against DynamoDB Local.

Every test releases its requests together with a barrier (see race.py), then checks both what the
clients were answered and what the table holds: a race that answers right but writes wrong is
still a bug.
"""

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from local.harness.client import Answer, ApiClient
from local.harness.factories import create_product, idempotency_key, if_match, line, order_body, placed_order
from local.harness.race import Call, all_at_once
from shopfeed.commerce import events, items, keys
from tests.ddblocal.conftest import StoredItems

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

INSUFFICIENT_STOCK = "https://shopfeed.dev/problems/insufficient-stock"
CONTENTION = "https://shopfeed.dev/problems/contention"
STALE_VERSION = "https://shopfeed.dev/problems/stale-version"


def test_fifty_buyers_racing_for_ten_units_get_exactly_ten_orders(admin: ApiClient, stored: StoredItems) -> None:
    # given
    create_product(admin, "P-LIMITED", available=10)
    orders = [
        Call("POST", "/orders", order_body(line("P-LIMITED")), idempotency_key(), sub=f"U{n:03d}") for n in range(50)
    ]
    stock_seen: list[int] = []
    race_over = threading.Event()

    def watch_stock() -> None:
        while not race_over.wait(0.005):
            stock_seen.append(stored.units("P-LIMITED"))

    # when
    with ThreadPoolExecutor(max_workers=1) as watcher:
        watching = watcher.submit(watch_stock)
        try:
            answers = all_at_once(orders, warm_up=Call("GET", "/products/P-LIMITED"))
        finally:
            race_over.set()
        watching.result()  # re-raises what went wrong in the watcher

    # then
    placed = [a.json for a in answers if a.status == 201]
    refused = [a for a in answers if a.status != 201]
    assert len(placed) == 10
    buyers = [call.sub for call, answer in zip(orders, answers, strict=True) if answer.status == 201]
    assert [order["user_id"] for order in placed] == buyers  # each answer is its own buyer's order
    assert {a.status for a in refused} == {409}
    assert {a.json["type"] for a in refused} <= {INSUFFICIENT_STOCK, CONTENTION}
    assert stored.units("P-LIMITED") == 0
    assert stock_seen, "the watcher never read the stock while the race ran"
    assert min(stock_seen) >= 0
    placed_ids = sorted(order["order_id"] for order in placed)
    assert sorted(order["order_id"] for order in stored.of(items.ORDER)) == placed_ids
    outbox = stored.of(items.OUTBOX_EVENT, event_type=events.ORDER_PLACED)
    assert sorted(event["aggregate_id"] for event in outbox) == placed_ids


def test_twenty_retries_of_one_idempotency_key_at_once_create_one_order(admin: ApiClient, stored: StoredItems) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=100)
    retry = Call("POST", "/orders", order_body(line("P-RED-TSHIRT", quantity=2)), {"Idempotency-Key": "retry-storm"})

    # when
    answers = all_at_once([retry] * 20, warm_up=Call("GET", "/products/P-RED-TSHIRT"))

    # then
    assert [a.status for a in answers] == [201] * 20, _problems(answers)
    assert len({a.json["order_id"] for a in answers}) == 1
    assert [a.headers.get("Idempotent-Replayed") for a in answers].count("true") == 19
    assert len(stored.of(items.ORDER)) == 1
    assert len(stored.of(items.OUTBOX_EVENT, event_type=events.ORDER_PLACED)) == 1
    assert stored.units("P-RED-TSHIRT") == 98


def test_ten_admins_patching_the_same_version_leave_one_winner_and_nine_stale(
    admin: ApiClient, stored: StoredItems
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", name="Red T-Shirt")
    etag = if_match(admin.get("/products/P-RED-TSHIRT").headers["ETag"])
    patches = [
        Call("PATCH", "/products/P-RED-TSHIRT", {"name": f"Red T-Shirt {n}"}, etag, "U-ADMIN", ("admin",))
        for n in range(10)
    ]

    # when
    answers = all_at_once(patches, warm_up=Call("GET", "/products/P-RED-TSHIRT"))

    # then
    assert sorted(a.status for a in answers) == [200] + [412] * 9
    assert {a.json["type"] for a in answers if a.status == 412} == {STALE_VERSION}
    assert {a.json["current_version"] for a in answers if a.status == 412} == {2}
    (winner,) = [a for a in answers if a.status == 200]
    product = stored.get(keys.product("P-RED-TSHIRT"))
    assert product["version"] == 2
    assert product["name"] == winner.json["name"]


def test_ten_concurrent_cancellations_restock_once_and_emit_one_event(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=10)
    create_product(admin, "P-BLUE-MUG", available=5)
    order = placed_order(commerce_api, line("P-RED-TSHIRT", quantity=3), line("P-BLUE-MUG", quantity=2))
    cancel = Call("POST", f"/orders/{order['order_id']}/cancel")

    # when
    answers = all_at_once([cancel] * 10, warm_up=Call("GET", f"/orders/{order['order_id']}"))

    # then
    assert [a.status for a in answers] == [200] * 10, _problems(answers)
    assert {a.json["status"] for a in answers} == {"Cancelled"}
    assert stored.units("P-RED-TSHIRT") == 10
    assert stored.units("P-BLUE-MUG") == 5
    cancelled = stored.of(items.OUTBOX_EVENT, event_type=events.ORDER_CANCELLED)
    assert [event["aggregate_id"] for event in cancelled] == [order["order_id"]]
    assert stored.get(keys.order(order["order_id"]))["version"] == 2


def _problems(answers: list[Answer]) -> Counter[str]:
    return Counter(f"{a.status} {a.text[:200]}" for a in answers if a.status >= 400)
