"""The payment window racing on DynamoDB Local: the sweep (its own containers, its own threads) against
payments, cancels and a second sweep. Every race checks what the callers were answered and what the
table holds: an order ends Paid or Expired, never both; its stock comes back once; ``OrderExpired`` is
written once per expired order."""

import json
import threading
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from local.harness.apigw import sample
from local.harness.client import ApiClient, LambdaContext
from local.harness.factories import create_product
from local.harness.race import Invoke, all_at_once
from shopfeed.commerce import bootstrap, events, items, keys
from shopfeed.commerce.errors import OrderNotPayable, PaymentInProgress
from shopfeed.commerce.models import DEFAULT_WAREHOUSE, Order, OrderLine, OrderMove, OrderStatus
from shopfeed.commerce.orders import expiry
from shopfeed.commerce.payments.services import start_payment
from shopfeed.platform import batch_writes, clients, dynamo
from shopfeed.platform.clock import iso, new_id, utc_now
from shopfeed.platform.errors import Contention, StaleVersion
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.identity import Caller
from shopfeed.platform.types import Money
from tests.ddblocal.conftest import StoredItems
from tests.ddblocal.test_payment_races import settle_here

# Its own engine: the thousand-order sweep writes ~5,000 items and the shared engine stays slow after.
pytestmark = [pytest.mark.ddblocal, pytest.mark.volume, pytest.mark.xdist_group(__name__)]

OVERDUE = timedelta(minutes=40)  # placed this long ago: 10 minutes past the default 30-minute window
PRICE = Money(amount=1999, currency="EUR")


@pytest.fixture(autouse=True)
def whole_sweeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A race's containers think they have 10 s left: no margin, so a sweep never stops early. One worker
    a sweep: DynamoDB Local is one JVM on this machine's cores, which threads only slow (200 orders:
    4.7 s with one worker, 10.4 s with four); the races below bring their own threads."""
    monkeypatch.setenv("EXPIRY_STOP_MARGIN_SECONDS", "0")
    monkeypatch.setenv("EXPIRY_WORKERS", "1")


def sweep_call() -> Invoke:
    return Invoke("OrderExpiryFunction", sample("schedules/order_expiry.json"))


def racing(*moves: Callable[[], str]) -> list[str]:
    """Each move in a thread of its own, released together; what each answered."""
    with ThreadPoolExecutor(max_workers=len(moves)) as pool:
        return list(pool.map(lambda move: move(), moves))


def sweeping(order_id: str, at_the_line: threading.Barrier) -> Callable[[], str]:
    """The sweep's move on one order: it reads the order Placed, waits for its rival, then writes."""
    store = bootstrap.expiry_job().store

    def move() -> str:
        order = store.get_order(order_id)
        assert order is not None
        expired = expiry.expiring(order, 30, utc_now)
        at_the_line.wait()
        try:
            return store.expire([expired])[order_id].value
        except Contention:
            return "busy"

    return move


def overdue_orders(stored: StoredItems, count: int, products: list[str], quantity: int = 1) -> list[Order]:
    """``count`` unpaid orders placed ``OVERDUE`` ago, one line each (products in turn), written below the
    API as placing writes them (header with its index keys, line, history) and their stock taken
    (BatchWriteItem and one update per product: a thousand orders in seconds)."""
    moment = utc_now() - OVERDUE
    orders = []
    for n in range(count):
        line = OrderLine(line_no=1, product_id=products[n % len(products)], quantity=quantity, unit_price=PRICE)
        at = iso(moment + timedelta(milliseconds=n))
        orders.append(
            Order(
                order_id=new_id(moment),
                user_id="U100",
                status=OrderStatus.PLACED,
                placed_at=at,
                updated_at=at,
                total=line.line_total,
                line_count=1,
                version=1,
                lines=(line,),
            )
        )
    written = [
        item
        for order in orders
        for item in (
            items.order_item(order),
            items.order_line_item(order, order.lines[0]),
            items.order_history_item(OrderMove.of(None, order, order.user_id, "placed")),
        )
    ]
    table = dynamo.Table(clients.dynamodb(), stored.table)
    batch_writes.write_all(
        table.client, table.name, [{"PutRequest": {"Item": dynamo.serialize(item)}} for item in written]
    )
    # Lines written without takes took from the default warehouse's first bucket (where a line placed
    # before buckets puts its units back), so that is where their units are held.
    held = Counter(order.lines[0].product_id for order in orders)
    for product_id, orders_of_it in held.items():
        bucket = keys.stock_bucket(product_id, DEFAULT_WAREHOUSE, 0)
        table.update(bucket, dynamo.Update(add={"available": -quantity * orders_of_it}))
    return orders


def stock(admin: ApiClient, product_id: str = "P-RED-TSHIRT") -> int:
    return int(admin.get(f"/products/{product_id}").json["available"])


def sweeps_of(answers: list[Any], count: int) -> list[dict[str, Any]]:
    return [json.loads(answer.text) for answer in answers[:count]]


def test_an_expiry_racing_a_payment_never_ends_paid_and_expired(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given twenty overdue orders of one unit each
    create_product(admin, "P-RED-TSHIRT", available=1000)
    orders = overdue_orders(stored, 20, ["P-RED-TSHIRT"])
    payments = bootstrap.payments()
    owner = Caller(user_id="U100", groups=frozenset())

    def paying(order_id: str, at_the_line: threading.Barrier) -> Callable[[], str]:
        def move() -> str:
            request = IdempotentRequest.of("U100", str(uuid.uuid4()), "pay", order_id)
            at_the_line.wait()
            try:
                created = start_payment(payments, owner, request, order_id, PRICE, "tok_sandbox_visa")
            except (OrderNotPayable, PaymentInProgress, Contention) as refused:
                return type(refused).__name__
            return created.value.attempt_id

        return move

    # when for each order the sweep (having read it Placed) and the customer's payment write at once
    answers = []
    for order in orders:
        line = threading.Barrier(2)
        answers.append(racing(sweeping(order.order_id, line), paying(order.order_id, line)))
    # and the payment worker settles every attempt that was started (the sandbox approves them)
    for order, (_, paid) in zip(orders, answers, strict=True):
        if paid.startswith("01"):
            settle_here({"order_id": order.order_id, "attempt_id": paid})
    # and a whole sweep after that expires nothing more
    from functions.order_expiry.app import lambda_handler

    last = lambda_handler(sample("schedules/order_expiry.json"), LambdaContext(function_name="OrderExpiryFunction"))

    # then each order is Paid (its payment began first) or Expired (the sweep wrote first), never both
    paid_count = 0
    for order, (expired, paid) in zip(orders, answers, strict=True):
        header = stored.get(keys.order(order.order_id))
        order_events = sorted(e["event_type"] for e in stored.of(items.OUTBOX_EVENT, aggregate_id=order.order_id))
        attempts = stored.of(items.PAYMENT_ATTEMPT, order_id=order.order_id)
        moves = sorted(m["to_status"] for m in stored.of(items.ORDER_HISTORY, order_id=order.order_id))
        assert items.PAYMENT_PENDING not in header
        assert keys.UNPAID_ORDERS.partition_key not in header
        if header["status"] == "Paid":
            paid_count += 1
            assert (expired, paid[:2]) == ("paying", "01"), (expired, paid)
            assert [a["status"] for a in attempts] == ["Authorized"]
            assert order_events == [events.PAYMENT_AUTHORIZED]
            assert moves == ["Paid", "Placed"]
        else:
            assert header["status"] == "Expired", header
            assert (expired, paid) in (("expired", "OrderNotPayable"), ("expired", "Contention")), (expired, paid)
            assert attempts == []
            assert order_events == [events.ORDER_EXPIRED]
            assert moves == ["Expired", "Placed"]
    # and the stock holds exactly the paid orders' units
    print(f"expiry vs payment: {paid_count} of 20 payments wrote first")
    assert stock(admin) == 1000 - paid_count
    assert last["expired"] == 0


def test_an_expiry_racing_a_cancel_restores_the_stock_once(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given twenty overdue orders of two units each
    create_product(admin, "P-RED-TSHIRT", available=1000)
    orders = overdue_orders(stored, 20, ["P-RED-TSHIRT"], quantity=2)
    assert stock(admin) == 960
    repository = bootstrap.repository()

    def cancelling(order_id: str, at_the_line: threading.Barrier) -> Callable[[], str]:
        def move() -> str:
            read = repository.get_order(order_id)
            assert read is not None
            cancelled = read.model_copy(
                update={"status": OrderStatus.CANCELLED, "updated_at": iso(utc_now()), "version": read.version + 1}
            )
            move = OrderMove.of(read.status, cancelled, "U100", "cancelled by its owner")
            at_the_line.wait()
            try:
                repository.cancel_order(read, cancelled, events.order_cancelled(cancelled, "U100"), move)
            except (StaleVersion, Contention) as refused:
                return type(refused).__name__
            return "cancelled"

        return move

    # when for each order the sweep and the customer's cancel, both having read it Placed, write at once
    answers = []
    for order in orders:
        line = threading.Barrier(2)
        answers.append(racing(sweeping(order.order_id, line), cancelling(order.order_id, line)))

    # then each order is Cancelled or Expired, with that one event and that one move
    cancelled_count = 0
    for order, (expired, cancelled) in zip(orders, answers, strict=True):
        header = stored.get(keys.order(order.order_id))
        order_events = sorted(e["event_type"] for e in stored.of(items.OUTBOX_EVENT, aggregate_id=order.order_id))
        moves = sorted(m["to_status"] for m in stored.of(items.ORDER_HISTORY, order_id=order.order_id))
        if header["status"] == "Cancelled":
            cancelled_count += 1
            assert (expired, cancelled) in (("moved", "cancelled"), ("busy", "cancelled")), (expired, cancelled)
            assert order_events == [events.ORDER_CANCELLED]
            assert moves == ["Cancelled", "Placed"]
        else:
            assert header["status"] == "Expired", header
            assert (expired, cancelled) in (("expired", "StaleVersion"), ("expired", "Contention"))
            assert order_events == [events.ORDER_EXPIRED]
            assert moves == ["Expired", "Placed"]
    # and the stock is back to where it was: each order's units restored exactly once
    print(f"expiry vs cancel: {cancelled_count} of 20 cancels wrote first")
    assert stock(admin) == 1000


def test_two_overlapping_sweeps_expire_each_order_once(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given 100 overdue orders over 5 products
    products = [f"P-ITEM-{n:02d}" for n in range(5)]
    for product_id in products:
        create_product(admin, product_id, available=100)
    orders = overdue_orders(stored, 100, products)

    # when two sweeps run at once (a slow sweep and the next tick), each in its own container
    sweeps = sweeps_of(all_at_once([sweep_call(), sweep_call()]), 2)

    # then between them every order was expired once, its stock back once
    print(f"overlapping sweeps: {sweeps}")
    assert sum(s["expired"] for s in sweeps) == 100
    expired = stored.of(items.OUTBOX_EVENT, event_type=events.ORDER_EXPIRED)
    assert Counter(e["aggregate_id"] for e in expired) == {o.order_id: 1 for o in orders}
    assert {product_id: stock(admin, product_id) for product_id in products} == dict.fromkeys(products, 100)


def test_a_thousand_abandoned_orders_release_exactly_their_stock_each_expired_once(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given 1,000 unpaid orders, 40 minutes old, over 10 products of 1,000 units each
    products = [f"P-ITEM-{n:02d}" for n in range(10)]
    for product_id in products:
        create_product(admin, product_id, available=1000)
    orders = overdue_orders(stored, 1000, products, quantity=3)
    assert {stock(admin, p) for p in products} == {700}

    # when the schedule fires
    from functions.order_expiry.app import lambda_handler

    context = LambdaContext(function_name="OrderExpiryFunction")
    report = lambda_handler(sample("schedules/order_expiry.json"), context)

    # then every order was expired, once, in that one sweep
    print(f"1,000 abandoned orders: {report}")
    assert report == {
        "outcome": "done",
        "expired": 1000,
        "paying": 0,
        "moved": 0,
        "busy": 0,
        "oldest_overdue_seconds": 0,
    }
    everything = stored.all()
    headers = [i for i in everything if i.get("entity_type") == items.ORDER]
    assert Counter(h["status"] for h in headers) == {"Expired": 1000}
    assert not any(keys.UNPAID_ORDERS.partition_key in h for h in headers)
    expired = [i for i in everything if i.get("entity_type") == items.OUTBOX_EVENT]
    assert Counter(e["aggregate_id"] for e in expired) == {o.order_id: 1 for o in orders}
    assert {e["event_type"] for e in expired} == {events.ORDER_EXPIRED}
    history = [i for i in everything if i.get("entity_type") == items.ORDER_HISTORY]
    assert Counter(h["to_status"] for h in history) == {"Placed": 1000, "Expired": 1000}
    # and the stock is back to its initial level exactly
    assert {product_id: stock(admin, product_id) for product_id in products} == dict.fromkeys(products, 1000)
    # and the next sweep finds nothing
    assert lambda_handler(sample("schedules/order_expiry.json"), context)["expired"] == 0
