"""Refunds racing, one container (process) per request or invocation, on DynamoDB Local.

As in test_payment_races.py, every race checks what the callers were answered and what the table
holds: one refund per payment, and the refunded total never above the amount captured.
"""

import uuid
from typing import Any

import pytest

from local.harness.client import ApiClient, LambdaContext
from local.harness.factories import create_product, if_match, line, placed_order
from local.harness.race import Call, Invoke, all_at_once
from shopfeed.commerce import events, items, keys
from shopfeed.commerce.payments.services import PaymentTask, RefundTask
from tests.ddblocal.conftest import StoredItems

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

CONTENTION = "https://shopfeed.dev/problems/contention"
INVALID_TRANSITION = "https://shopfeed.dev/problems/invalid-transition"


def worker_event(task: PaymentTask) -> dict[str, Any]:
    """The payment worker's event for one message, as its SQS mapping hands it over."""
    record = {"messageId": str(uuid.uuid4()), "receiptHandle": "r", "body": task.model_dump_json(), "attributes": {}}
    return {"Records": [record | {"eventSource": "aws:sqs", "messageAttributes": {}, "md5OfBody": ""}]}


def settle_here(task: PaymentTask) -> None:
    from functions.payment_worker.app import lambda_handler

    response = lambda_handler(worker_event(task), LambdaContext(function_name="PaymentWorkerFunction"))
    assert response == {"batchItemFailures": []}


def paid_order(client: ApiClient) -> tuple[dict[str, Any], str]:
    """An order paid by the worker (the provider's answer recorded); answers it and its attempt id."""
    order = placed_order(client, line(quantity=2))
    started = client.post(
        f"/orders/{order['order_id']}/payments",
        {"amount": order["total"], "payment_method": "tok_sandbox_visa"},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert started.status == 202, started.text
    settle_here(PaymentTask(order_id=order["order_id"], attempt_id=started.json["attempt_id"]))
    return order, started.json["attempt_id"]


@pytest.fixture
def shop(admin: ApiClient) -> None:
    create_product(admin, "P-RED-TSHIRT", available=1000)


def test_ten_concurrent_cancels_of_a_paid_order_start_exactly_one_refund(
    commerce_api: ApiClient, admin: ApiClient, shop: None, stored: StoredItems
) -> None:
    # given a paid order
    order, attempt_id = paid_order(commerce_api)
    # when ten cancels race
    cancel = Call("POST", f"/orders/{order['order_id']}/cancel")
    answers = all_at_once([cancel] * 10, warm_up=Call("GET", f"/orders/{order['order_id']}"))
    # then every caller was told the order is Cancelled (a retry of a cancel answers the cancelled
    # order), or to retry (contention)
    assert all(
        (a.status == 200 and a.json["status"] == "Cancelled") or (a.status == 409 and a.json["type"] == CONTENTION)
        for a in answers
    ), [a.text for a in answers]
    assert any(a.status == 200 for a in answers)
    # and the table holds one refund of the whole amount, the one the order has in flight
    attempt = stored.get(keys.payment_attempt(order["order_id"], attempt_id))
    header = stored.get(keys.order(order["order_id"]))
    assert attempt["refund"]["status"] == "Pending"
    assert header[items.REFUND_PENDING] == attempt["refund"]["refund_id"]
    assert attempt[items.REFUNDED] == attempt["amount"]["amount"] == order["total"]["amount"]
    # and the order was cancelled once: one version, one event, one restock
    assert (header["status"], header["version"]) == ("Cancelled", 3)
    assert len(stored.of(items.OUTBOX_EVENT, event_type=events.ORDER_CANCELLED)) == 1
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == 1000


def test_a_refund_message_handled_three_times_at_once_is_recorded_once_and_never_over_refunds(
    commerce_api: ApiClient, shop: None, stored: StoredItems
) -> None:
    # given a cancelled paid order, its refund Pending
    order, attempt_id = paid_order(commerce_api)
    assert commerce_api.post(f"/orders/{order['order_id']}/cancel").status == 200
    refund_id = stored.get(keys.payment_attempt(order["order_id"], attempt_id))["refund"]["refund_id"]
    task = RefundTask(order_id=order["order_id"], attempt_id=attempt_id, refund_id=refund_id)
    # when three workers get its message at once (SQS delivers at least once)
    answers = all_at_once([Invoke("PaymentWorkerFunction", worker_event(task))] * 3)
    # then each succeeded; the provider's ledger holds one answer under the refund id, recorded once
    assert [a.json for a in answers] == [{"batchItemFailures": []}] * 3
    ledger = stored.get(keys.sandbox_refund(refund_id))
    assert ledger["outcome"] == "approved"
    print(f"provider calls with 3 concurrent deliveries: {ledger['calls']}")
    attempt = stored.get(keys.payment_attempt(order["order_id"], attempt_id))
    assert attempt["refund"]["status"] == "Refunded"
    assert attempt[items.REFUNDED] == order["total"]["amount"]
    header = stored.get(keys.order(order["order_id"]))
    assert (header["status"], header["version"]) == ("Refunded", 4)
    assert len(stored.of(items.OUTBOX_EVENT, event_type=events.PAYMENT_REFUNDED)) == 1
    assert len(stored.of(items.ORDER_HISTORY, order_id=order["order_id"])) == 4  # placed, paid, cancelled, refunded


def test_a_cancel_racing_its_first_parcel_shipping_either_refunds_or_ships_never_both(
    commerce_api: ApiClient, shop: None, stored: StoredItems
) -> None:
    # given eight paid orders, each with a parcel Created
    ops = commerce_api.as_user("U-OPS", "ops")
    orders = []
    for _ in range(8):
        order, attempt_id = paid_order(commerce_api)
        parcel = ops.post(
            f"/orders/{order['order_id']}/shipments", {"carrier": "dhl"}, headers={"Idempotency-Key": str(uuid.uuid4())}
        )
        assert parcel.status == 201, parcel.text
        orders.append((order, attempt_id, parcel.json))
    calls: list[Call | Invoke] = []
    for order, _, parcel in orders:
        path = f"/orders/{order['order_id']}/shipments/{parcel['shipment_id']}"
        calls += [
            Call("POST", f"/orders/{order['order_id']}/cancel"),
            Call("PATCH", path, {"status": "Shipped"}, if_match('"1"'), sub="U-OPS", groups=("ops",)),
        ]
    # when each order's cancel and its parcel's shipping race
    answers = all_at_once(calls, warm_up=Call("GET", "/products/P-RED-TSHIRT"))
    # then each order ended one way: cancelled with its parcel and refunded, or shipped with no refund
    for n, (order, attempt_id, parcel) in enumerate(orders):
        cancel, ship = answers[2 * n], answers[2 * n + 1]
        header = stored.get(keys.order(order["order_id"]))
        attempt = stored.get(keys.payment_attempt(order["order_id"], attempt_id))
        shipment = stored.get(keys.shipment(order["order_id"], parcel["shipment_id"]))
        if header["status"] == "Cancelled":
            # the parcel moved under the shipping (412: its version), or the order did (409)
            assert (cancel.status, ship.status) in ((200, 409), (200, 412)), (cancel.text, ship.text)
            assert shipment["status"] == "Cancelled"
            assert attempt[items.REFUNDED] == order["total"]["amount"]
        else:
            assert header["status"] == "Shipped", header
            assert (cancel.status, ship.status) == (409, 200), (cancel.text, ship.text)
            assert cancel.json["type"] in (INVALID_TRANSITION, CONTENTION)
            assert shipment["status"] == "Shipped"
            assert not {items.REFUNDED, "refund"} & attempt.keys()
    cancelled = sum(stored.get(keys.order(o["order_id"]))["status"] == "Cancelled" for o, _, _ in orders)
    print(f"cancel vs ship: {cancelled} of {len(orders)} cancels won")
