"""Payments and shipments racing, one container (process) per request or invocation, on DynamoDB Local.

As in test_concurrency.py, every race checks what the callers were answered and what the table holds.
"""

import json
import uuid
from typing import Any

import pytest

from local.harness.client import ApiClient, LambdaContext
from local.harness.factories import create_product, if_match, line, placed_order
from local.harness.race import Call, Invoke, all_at_once
from shopfeed.commerce import events, items, keys
from shopfeed.commerce.payments.services import PaymentTask
from tests.ddblocal.conftest import StoredItems

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

IN_PROGRESS = "https://shopfeed.dev/problems/payment-in-progress"
NOT_PAYABLE = "https://shopfeed.dev/problems/order-not-payable"
CONTENTION = "https://shopfeed.dev/problems/contention"


def pay_call(order: dict[str, Any], key: str | None = None) -> Call:
    body = {"amount": order["total"], "payment_method": "tok_sandbox_visa"}
    return Call("POST", f"/orders/{order['order_id']}/payments", body, {"Idempotency-Key": key or str(uuid.uuid4())})


def settle(attempt: dict[str, Any]) -> Invoke:
    """The payment worker handed the attempt's message, as its SQS mapping would."""
    body = PaymentTask(order_id=attempt["order_id"], attempt_id=attempt["attempt_id"]).model_dump_json()
    record = {"messageId": attempt["attempt_id"], "receiptHandle": "r", "body": body, "attributes": {}}
    event = {"Records": [record | {"eventSource": "aws:sqs", "messageAttributes": {}, "md5OfBody": ""}]}
    return Invoke("PaymentWorkerFunction", event)


def settle_here(attempt: dict[str, Any]) -> None:
    from functions.payment_worker.app import lambda_handler

    invoke = settle(attempt)
    assert lambda_handler(dict(invoke.event), LambdaContext(function_name=invoke.function)) == {"batchItemFailures": []}


@pytest.fixture
def shop(admin: ApiClient) -> None:
    create_product(admin, "P-RED-TSHIRT", available=1000)


def test_ten_concurrent_payments_of_one_order_start_exactly_one_attempt(
    commerce_api: ApiClient, shop: None, stored: StoredItems
) -> None:
    # given
    order = placed_order(commerce_api, line())
    # when ten payments with ten keys race
    answers = all_at_once([pay_call(order) for _ in range(10)], warm_up=Call("GET", f"/orders/{order['order_id']}"))
    # then one is accepted, the nine others refused with a 409 saying a payment is in progress
    accepted = [a.json for a in answers if a.status == 202]
    refused = [a for a in answers if a.status != 202]
    assert len(accepted) == 1, [a.text for a in answers]
    assert {a.status for a in refused} == {409}
    assert {a.json["type"] for a in refused} <= {IN_PROGRESS, CONTENTION}
    in_progress = [a.json for a in refused if a.json["type"] == IN_PROGRESS]
    assert all(problem["attempt_id"] == accepted[0]["attempt_id"] for problem in in_progress)
    # and the table holds one attempt, the one the order has in flight
    (attempt,) = stored.of(items.PAYMENT_ATTEMPT)
    assert attempt["attempt_id"] == accepted[0]["attempt_id"]
    assert stored.get(keys.order(order["order_id"]))[items.PAYMENT_PENDING] == attempt["attempt_id"]


def test_a_payment_racing_a_cancel_of_the_same_order_exactly_one_wins(
    commerce_api: ApiClient, admin: ApiClient, shop: None, stored: StoredItems
) -> None:
    # given five orders, each paid and cancelled at the same moment
    orders = [placed_order(commerce_api, line(quantity=2)) for _ in range(5)]
    calls: list[Call | Invoke] = []
    for order in orders:
        calls += [pay_call(order), Call("POST", f"/orders/{order['order_id']}/cancel")]
    # when
    answers = all_at_once(calls, warm_up=Call("GET", "/products/P-RED-TSHIRT"))
    # then for each order one of the two succeeded, the other was refused, and the table agrees
    for n, order in enumerate(orders):
        paid, cancelled = answers[2 * n], answers[2 * n + 1]
        assert sorted([paid.status, cancelled.status]) in ([200, 409], [202, 409]), (paid.text, cancelled.text)
        header = stored.get(keys.order(order["order_id"]))
        mine = stored.of(items.PAYMENT_ATTEMPT, order_id=order["order_id"])
        if paid.status == 202:
            assert cancelled.json["type"] in (IN_PROGRESS, CONTENTION)
            assert (header["status"], header[items.PAYMENT_PENDING]) == ("Placed", paid.json["attempt_id"])
            assert len(mine) == 1
        else:
            assert paid.json["type"] == NOT_PAYABLE
            assert header["status"] == "Cancelled"
            assert mine == []
    cancelled_count = sum(answers[2 * n + 1].status == 200 for n in range(5))
    print(f"payment vs cancel: {cancelled_count} of 5 cancels won")
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == 1000 - 2 * (5 - cancelled_count)


def test_an_approval_racing_a_cancel_never_lands_on_a_cancelled_order(
    commerce_api: ApiClient, admin: ApiClient, shop: None, stored: StoredItems
) -> None:
    # given five orders with a payment in flight
    orders = [placed_order(commerce_api, line()) for _ in range(5)]
    attempts = []
    for order in orders:
        accepted = commerce_api.post(
            f"/orders/{order['order_id']}/payments",
            {"amount": order["total"], "payment_method": "tok_sandbox_visa"},
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )
        assert accepted.status == 202, accepted.text
        attempts.append(accepted.json)
    calls: list[Call | Invoke] = []
    for order, attempt in zip(orders, attempts, strict=True):
        calls += [settle(attempt), Call("POST", f"/orders/{order['order_id']}/cancel")]
    # when the worker's approval and the customer's cancel race
    answers = all_at_once(calls, warm_up=Call("GET", "/products/P-RED-TSHIRT"))
    # then every approval was recorded, and each order ended in one consistent state:
    for n, (order, attempt) in enumerate(zip(orders, attempts, strict=True)):
        settled, cancel = answers[2 * n], answers[2 * n + 1]
        assert json.loads(settled.text) == {"batchItemFailures": []}
        assert stored.get(keys.payment_attempt(order["order_id"], attempt["attempt_id"]))["status"] == "Authorized"
        header = stored.get(keys.order(order["order_id"]))
        proof = stored.get(keys.purchase("U100", "P-RED-TSHIRT"))
        order_events = sorted(e["event_type"] for e in stored.of(items.OUTBOX_EVENT, aggregate_id=order["order_id"]))
        if cancel.status == 200:
            # the cancel came after the approval: a paid order cancelled, its proof taken back
            assert header["status"] == "Cancelled"
            assert order_events == sorted([events.ORDER_PLACED, events.PAYMENT_AUTHORIZED, events.ORDER_CANCELLED])
        else:
            # the cancel met the payment in flight: refused, the order paid
            assert cancel.status == 409, cancel.text
            assert cancel.json["type"] in (IN_PROGRESS, CONTENTION)
            assert header["status"] == "Paid"
            assert order_events == sorted([events.ORDER_PLACED, events.PAYMENT_AUTHORIZED])
        assert items.PAYMENT_PENDING not in header
    cancelled = sum(answers[2 * n + 1].status == 200 for n in range(5))
    print(f"approval vs cancel: {cancelled} of 5 cancels came after the approval")
    assert stored.get(keys.purchase("U100", "P-RED-TSHIRT"))[items.PAID_ORDERS] == 5 - cancelled
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == 1000 - (5 - cancelled)
    assert proof["entity_type"] == items.PURCHASE


def test_two_parcels_shipped_at_once_move_their_order_once(
    commerce_api: ApiClient, shop: None, stored: StoredItems
) -> None:
    # given a paid order with four parcels
    order = placed_order(commerce_api, line())
    attempt = commerce_api.post(
        f"/orders/{order['order_id']}/payments",
        {"amount": order["total"], "payment_method": "tok_sandbox_visa"},
        headers={"Idempotency-Key": "pay"},
    ).json
    settle_here(attempt)
    ops = commerce_api.as_user("U-OPS", "ops")
    parcels = []
    for _ in range(4):
        created = ops.post(
            f"/orders/{order['order_id']}/shipments", {"carrier": "dhl"}, headers={"Idempotency-Key": str(uuid.uuid4())}
        )
        assert created.status == 201, created.text
        parcels.append(created.json)
    # when all four ship at once
    moves: list[Call | Invoke] = [
        Call(
            "PATCH",
            f"/orders/{order['order_id']}/shipments/{parcel['shipment_id']}",
            {"status": "Shipped"},
            if_match('"1"'),
            sub="U-OPS",
            groups=("ops",),
        )
        for parcel in parcels
    ]
    answers = all_at_once(moves, warm_up=Call("GET", f"/orders/{order['order_id']}"))
    # then every parcel shipped (the order's changes were read again and decided again), the order once
    assert [a.status for a in answers] == [200] * 4, [a.text for a in answers]
    header = stored.get(keys.order(order["order_id"]))
    assert (header["status"], header["version"]) == ("Shipped", 3)
    changed = stored.of(items.OUTBOX_EVENT, event_type=events.ORDER_STATUS_CHANGED)
    assert len(changed) == 1
    assert len(stored.of(items.OUTBOX_EVENT, event_type=events.SHIPMENT_STATUS_CHANGED)) == 4
