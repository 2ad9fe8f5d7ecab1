"""The payment window on moto: an order not paid within PaymentWindowMinutes is Expired by the sweep,
its stock restored and ``OrderExpired`` written once, in one guarded transaction per order; never an
order paid, paying, young or already moved. The races are on DynamoDB Local
(tests/ddblocal/test_payment_window.py)."""

import dataclasses
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from functions.order_expiry.app import lambda_handler as order_expiry
from local.harness.apigw import sample
from local.harness.client import ApiClient
from local.harness.factories import create_product, idempotency_key, seed_order
from local.harness.tables import table_items
from shopfeed.commerce import bootstrap, events, items, keys
from shopfeed.commerce.models import DEFAULT_WAREHOUSE, EXPIRY_ACTOR, Order
from shopfeed.commerce.orders import expiry
from shopfeed.platform import dynamo
from shopfeed.platform.clock import iso, utc_now
from tests.support.archive import ScheduledContext
from tests.support.calls import dynamodb_calls
from tests.support.payments import PaymentChain

pytestmark = pytest.mark.usefixtures("shop")

WINDOW = timedelta(minutes=30)  # the template's default (PaymentWindowMinutes)


@pytest.fixture(autouse=True)
def one_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto's in-process backend is not safe for concurrent transactions: the sweep expires one order
    at a time here (DynamoDB Local runs its threads, in tests/ddblocal)."""
    monkeypatch.setenv("EXPIRY_WORKERS", "1")


def sweep(at: datetime | None = None, **policy: Any) -> expiry.ExpiryReport:
    """One sweep as the function runs it, at ``at`` (now by default)."""
    ports = bootstrap.expiry_job()
    if policy:
        ports = expiry.ExpiryPorts(ports.store, dataclasses.replace(ports.policy, **policy))
    return expiry.run(ports, lambda: 60_000, clock=(lambda: at) if at else utc_now)


def placed_ago(age: timedelta, shard: int = 0, product_id: str = "P-RED-TSHIRT") -> Order:
    """An order of U100 placed ``age`` ago, unpaid, through the repository's own place transaction."""
    return seed_order(bootstrap.repository(), "U100", utc_now() - age, shard=shard, product_id=product_id)


def stock(client: ApiClient, product_id: str = "P-RED-TSHIRT") -> int:
    return int(client.get(f"/products/{product_id}").json["available"])


def expired_events() -> list[dict[str, Any]]:
    return [i for i in table_items() if i["entity_type"] == items.OUTBOX_EVENT and i["event_type"] == "OrderExpired"]


def unpaid_listed() -> set[str]:
    return {keys.parse_order_id(i["PK"]) for i in table_items() if keys.UNPAID_ORDERS.partition_key in i}


def pay(client: ApiClient, order: Order) -> int:
    body = {"amount": order.total.model_dump(), "payment_method": "tok_sandbox_visa"}
    return client.post(f"/orders/{order.order_id}/payments", body, headers=idempotency_key()).status


# -- expiring ----------------------------------------------------------------------------------------


def test_an_order_unpaid_past_its_window_is_expired_restocked_and_announced_once(commerce_api: ApiClient) -> None:
    # given an order placed 31 minutes ago, holding one unit
    order = placed_ago(WINDOW + timedelta(minutes=1))
    assert stock(commerce_api) == 99
    assert unpaid_listed() == {order.order_id}

    # when the sweep runs
    with dynamodb_calls() as calls:
        report = sweep()

    # then the order is Expired, its unit back, out of the unpaid index, one OrderExpired written
    assert report.counts == {
        "outcome": "done",
        "expired": 1,
        "paying": 0,
        "moved": 0,
        "busy": 0,
        "oldest_overdue_seconds": 0,
    }
    answer = commerce_api.get(f"/orders/{order.order_id}")
    assert (answer.json["status"], answer.headers["ETag"]) == ("Expired", '"2"')
    assert stock(commerce_api) == 100
    assert unpaid_listed() == set()
    [event] = expired_events()
    assert event["detail"]["order_id"] == order.order_id
    assert event["detail"]["payment_window_minutes"] == 30
    assert event["detail"]["restocked"] == [
        {"product_id": "P-RED-TSHIRT", "quantity": 1, "unit_price": order.lines[0].unit_price.model_dump()}
    ]

    # and in round trips: a Query per index shard, then per order its read and one transaction holding
    # the order, its event, its history item and the stock
    # (and the stock layouts of its products: the units go back to the buckets they came from)
    assert calls.counts() == {"Query": keys.UNPAID_ORDER_SHARDS + 1, "BatchGetItem": 1, "TransactWriteItems": 1}
    [transaction] = [request for operation, request in calls.requests if operation == "TransactWriteItems"]
    written = [next(iter(op.values())) for op in transaction["TransactItems"]]
    touched = [dynamo.deserialize(w.get("Key") or w["Item"]) for w in written]
    assert [(k["PK"], k["SK"]) for k in touched] == [
        (keys.order_partition(order.order_id), keys.META),
        (keys.outbox(event["event_id"])["PK"], keys.EVENT),
        (keys.order_partition(order.order_id), f"{keys.HISTORY}000002"),
        (keys.stock_bucket("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 0)["PK"], keys.STOCK_ITEM),
    ]

    # and its history names the sweeper and why
    history = commerce_api.get(f"/orders/{order.order_id}/history").json["items"]
    assert [(m["from_status"], m["to_status"], m["by"], m["reason"]) for m in history] == [
        (None, "Placed", "U100", "placed"),
        ("Placed", "Expired", EXPIRY_ACTOR, "not paid within 30 minutes"),
    ]

    # and a second sweep finds nothing
    assert sweep().counts["expired"] == 0
    assert len(expired_events()) == 1
    assert stock(commerce_api) == 100


def test_the_scheduled_function_expires_overdue_orders_of_every_shard(commerce_api: ApiClient) -> None:
    # given overdue orders in each write shard of the unpaid index, and a young one
    overdue = [placed_ago(WINDOW + timedelta(minutes=5 + shard), shard=shard) for shard in range(4)]
    young = placed_ago(WINDOW - timedelta(minutes=1))

    # when the schedule fires
    result = order_expiry(sample("schedules/order_expiry.json"), ScheduledContext("OrderExpiryFunction", 55_000))

    # then
    assert (result["outcome"], result["expired"]) == ("done", 4)
    assert {commerce_api.get(f"/orders/{o.order_id}").json["status"] for o in overdue} == {"Expired"}
    assert commerce_api.get(f"/orders/{young.order_id}").json["status"] == "Placed"
    assert unpaid_listed() == {young.order_id}
    assert stock(commerce_api) == 99


def test_an_order_is_expired_with_every_line_restocked(commerce_api: ApiClient, admin: ApiClient) -> None:
    # given an order of two products placed 40 minutes ago
    create_product(admin, "P-BLUE-MUG", price=899, available=5)
    body = {
        "lines": [
            {"product_id": "P-RED-TSHIRT", "quantity": 3, "unit_price": {"amount": 1999, "currency": "EUR"}},
            {"product_id": "P-BLUE-MUG", "quantity": 2, "unit_price": {"amount": 899, "currency": "EUR"}},
        ]
    }
    order = commerce_api.post("/orders", body, headers=idempotency_key()).json
    assert (stock(commerce_api), stock(commerce_api, "P-BLUE-MUG")) == (97, 3)

    # when a sweep runs 31 minutes after its placement
    report = sweep(at=datetime.fromisoformat(order["placed_at"]) + WINDOW + timedelta(minutes=1))

    # then
    assert report.expired == 1
    assert (stock(commerce_api), stock(commerce_api, "P-BLUE-MUG")) == (100, 5)


# -- what is never expired ---------------------------------------------------------------------------


def test_an_order_within_its_window_is_left_alone(commerce_api: ApiClient) -> None:
    # given
    order = placed_ago(WINDOW - timedelta(seconds=30))
    # when
    report = sweep()
    # then
    assert report.counts == {
        "outcome": "done",
        "expired": 0,
        "paying": 0,
        "moved": 0,
        "busy": 0,
        "oldest_overdue_seconds": 0,
    }
    assert commerce_api.get(f"/orders/{order.order_id}").json["status"] == "Placed"
    assert expired_events() == []


def test_a_paid_order_leaves_the_unpaid_index_and_is_never_expired(
    commerce_api: ApiClient, payment_chain: PaymentChain
) -> None:
    # given an order paid within its window
    order = placed_ago(WINDOW - timedelta(minutes=5))
    assert pay(commerce_api, order) == 202
    payment_chain.run()
    # when a sweep runs long after its deadline
    report = sweep(at=utc_now() + timedelta(hours=1))
    # then it was not even listed
    assert report.counts["expired"] + report.counts["moved"] == 0
    assert commerce_api.get(f"/orders/{order.order_id}").json["status"] == "Paid"
    assert unpaid_listed() == set()
    assert stock(commerce_api) == 99


def test_an_order_with_a_payment_in_flight_is_left_until_the_payment_settles(
    commerce_api: ApiClient, admin: ApiClient, payment_chain: PaymentChain
) -> None:
    # given an order whose payment started (a decline is on its way: the sandbox declines 2500.00)
    create_product(admin, "P-DECLINED", price=250_000, available=1)
    line = {"product_id": "P-DECLINED", "quantity": 1, "unit_price": {"amount": 250_000, "currency": "EUR"}}
    placed = commerce_api.post("/orders", {"lines": [line]}, headers=idempotency_key()).json
    order = bootstrap.repository().get_order(placed["order_id"])
    assert order is not None
    assert pay(commerce_api, order) == 202
    three_minutes_overdue = datetime.fromisoformat(order.placed_at) + WINDOW + timedelta(minutes=3)

    # when a sweep runs after its deadline, with the payment in flight
    report = sweep(at=three_minutes_overdue)

    # then the order is left Placed, reported as paying and how overdue it is
    assert (report.expired, report.paying, report.outcome) == (0, 1, expiry.Outcome.DONE)
    assert report.oldest_overdue_seconds == 180
    assert commerce_api.get(f"/orders/{order.order_id}").json["status"] == "Placed"
    assert stock(commerce_api, "P-DECLINED") == 0

    # and once the payment is declined, the next sweep expires it
    payment_chain.run()
    assert sweep(at=three_minutes_overdue).expired == 1
    assert commerce_api.get(f"/orders/{order.order_id}").json["status"] == "Expired"
    assert stock(commerce_api, "P-DECLINED") == 1


def test_an_expired_order_can_neither_be_paid_nor_cancelled(commerce_api: ApiClient) -> None:
    # given
    order = placed_ago(WINDOW + timedelta(minutes=1))
    sweep()
    # when
    paid = pay(commerce_api, order)
    cancelled = commerce_api.post(f"/orders/{order.order_id}/cancel")
    # then: nothing restocked twice, nothing charged
    assert (paid, cancelled.status) == (409, 409)
    assert stock(commerce_api) == 100
    assert len(expired_events()) == 1


def test_a_listed_order_cancelled_before_its_expiry_is_counted_moved_and_restocked_once(
    commerce_api: ApiClient,
) -> None:
    # given an overdue order cancelled after the sweep listed it and before it expired it
    order = placed_ago(WINDOW + timedelta(minutes=1))
    store = bootstrap.expiry_job().store
    real_get = store.get_order

    def cancelled_first(order_id: str) -> Order | None:
        read = real_get(order_id)  # Placed, as the sweep reads it
        assert commerce_api.post(f"/orders/{order_id}/cancel").status == 200
        return read

    # when
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "get_order", cancelled_first)
        report = sweep()

    # then its guarded transaction wrote nothing: one restock, no OrderExpired
    assert (report.expired, report.moved) == (0, 1)
    assert commerce_api.get(f"/orders/{order.order_id}").json["status"] == "Cancelled"
    assert stock(commerce_api) == 100
    assert expired_events() == []
    assert [m["to_status"] for m in commerce_api.get(f"/orders/{order.order_id}/history").json["items"]] == [
        "Placed",
        "Cancelled",
    ]


# -- a sweep's bounds --------------------------------------------------------------------------------


def test_a_sweep_takes_at_most_its_bound_oldest_first_and_reports_what_it_left(commerce_api: ApiClient) -> None:
    # given five overdue orders, 31 to 35 minutes old
    orders = [placed_ago(WINDOW + timedelta(minutes=minutes), shard=minutes % 4) for minutes in (1, 2, 3, 4, 5)]
    # when a sweep may take three
    report = sweep(max_orders=3)
    # then it took the three oldest, and reports the oldest it left (32 minutes old: 2 minutes overdue)
    assert (report.outcome, report.expired) == (expiry.Outcome.LIMIT, 3)
    assert 110 <= report.oldest_overdue_seconds <= 130
    assert unpaid_listed() == {orders[0].order_id, orders[1].order_id}
    # and the next sweep goes on
    assert sweep().counts["outcome"] == "done"
    assert unpaid_listed() == set()


def test_a_sweep_short_of_time_begins_nothing_and_the_next_goes_on(commerce_api: ApiClient) -> None:
    # given
    placed_ago(WINDOW + timedelta(minutes=1))
    ports = bootstrap.expiry_job()
    short: Callable[[], int] = lambda: 1_000  # noqa: E731 (less than the 10 s margin)
    # when
    report = expiry.run(ports, short)
    # then
    assert (report.outcome, report.expired) == (expiry.Outcome.TIME, 0)
    assert report.oldest_overdue_seconds >= 60
    assert sweep().expired == 1


def test_the_expired_event_carries_what_subscribers_need() -> None:
    # given an order as the sweep expires it
    order = Order.model_validate(
        {
            "order_id": "01M8D6H6NFA0000000000000AA",
            "user_id": "U100",
            "status": "Expired",
            "placed_at": iso(utc_now() - WINDOW),
            "updated_at": iso(utc_now()),
            "total": {"amount": 1999, "currency": "EUR"},
            "line_count": 1,
            "version": 2,
        }
    )
    # when
    event = events.order_expired(order, 30)
    # then the detail-type subscribers route on, and the detail
    assert (event.event_type, event.source, event.aggregate_id) == ("OrderExpired", "shopfeed.commerce", order.order_id)
    assert set(event.detail) == {
        "order_id",
        "user_id",
        "placed_at",
        "expired_at",
        "payment_window_minutes",
        "total",
        "restocked",
    }
