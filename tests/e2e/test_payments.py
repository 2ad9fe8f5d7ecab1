"""Paying and shipping over HTTP against the local stack: the API accepts the attempt, the stream consumer
queues it on PaymentQueue, the payment worker (the template's SQS mapping) settles it with the sandbox,
the outbox relays the outcome to the bus and the example subscriber queue (OrderEventsQueue) receives it.

The sandbox decides by amount (docs/data-model.md): each test orders a product priced for the outcome it
wants."""

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from local import cfn
from local.queues import RECEIVE_WAIT_S
from shopfeed.commerce import keys
from shopfeed.commerce.payments.services import PaymentTask
from shopfeed.platform import dynamo
from tests.e2e.conftest import Client, EventInbox, LocalStack
from tests.e2e.test_orders import order_body, place

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

SETTLE_S = 60  # a stream poll, a queue poll, the relay's stream poll: seconds each here
APPROVED, DECLINED, UNAVAILABLE = 4200, 200_400, 300_000


def eventually[T](read: Callable[[], T], done: Callable[[T], bool], within: float = SETTLE_S) -> T:
    """``read()`` once ``done`` says so, or its last value when ``within`` seconds have passed."""
    deadline = time.monotonic() + within
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.3)


def priced(admin: Client, amount: int) -> dict[str, Any]:
    body = {
        "product_id": f"P-PAY-{uuid.uuid4().hex[:8].upper()}",
        "name": "Payment test",
        "category": "payments",
        "price": {"amount": amount, "currency": "EUR"},
        "available": 10,
    }
    created = admin.post("/products", json=body)
    assert created.status_code == 201, created.text
    return dict(created.json())


def ordered(customer: Client, admin: Client, amount: int) -> dict[str, Any]:
    placed = place(customer, order_body(priced(admin, amount), 1))
    assert placed.status_code == 201, placed.text
    return dict(placed.json())


def pay(customer: Client, order: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    answer = customer.post(
        f"/orders/{order['order_id']}/payments",
        json={"amount": order["total"], "payment_method": "tok_sandbox_visa"},
        headers={"Idempotency-Key": key or str(uuid.uuid4())},
    )
    assert answer.status_code == 202, answer.text
    return dict(answer.json())


def status_of(customer: Client, order: dict[str, Any]) -> str:
    return str(customer.get(f"/orders/{order['order_id']}").json()["status"])


def events_for(inbox: EventInbox, event_type: str, order_id: str) -> list[dict[str, Any]]:
    return inbox.wait_for(
        lambda e: e["detail-type"] == event_type and e["detail"]["data"]["order_id"] == order_id, timeout_s=SETTLE_S
    )


def sandbox_calls(stack: LocalStack, attempt_id: str) -> int:
    """How often the sandbox was asked under this attempt's idempotency key (its ledger item, read strongly)."""
    raw = stack.dynamodb().get_item(
        TableName="CommerceTable", Key=dynamo.serialize(keys.sandbox_charge(attempt_id)), ConsistentRead=True
    )
    return int(dynamo.deserialize(raw["Item"])["calls"]) if "Item" in raw else 0


def queue_url(stack: LocalStack, logical_id: str) -> str:
    return str(stack.page()["resources"][logical_id]["QueueUrl"])


def worker_receipts(stack: LocalStack) -> int:
    (poller,) = [p for p in stack.page()["pollers"] if p["function"] == "PaymentWorkerFunction"]
    return int(poller["stats"]["messages_received"])


def max_receives() -> int:
    return int(cfn.load()["Resources"]["PaymentQueue"]["Properties"]["RedrivePolicy"]["maxReceiveCount"])


@pytest.fixture
def quick_retries(local_stack: LocalStack) -> Iterator[None]:
    """PaymentQueue's visibility timeout at 1 s for one test, so its receives (the template's count)
    happen in seconds instead of 180 s apart; the template's value is put back after."""
    sqs, url = local_stack.aws("sqs"), queue_url(local_stack, "PaymentQueue")
    template = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "1"})
    # A receive reads the queue's timeout when it starts: one long poll begun just before the change
    # would still hold the next message for 180 s (seen once on a loaded machine). Let it end first.
    time.sleep(RECEIVE_WAIT_S + 1)
    yield
    sqs.set_queue_attributes(QueueUrl=url, Attributes=template)


# -- the sandbox's outcomes ------------------------------------------------------------------------


def test_an_approved_payment_pays_the_order_and_publishes_payment_authorized(
    customer: Client, admin: Client, inbox: EventInbox
) -> None:
    # given
    order = ordered(customer, admin, APPROVED)
    # when
    attempt = pay(customer, order)
    # then the order becomes Paid, and the subscriber receives PaymentAuthorized
    assert attempt["status"] == "Pending"
    assert eventually(lambda: status_of(customer, order), lambda s: s == "Paid") == "Paid"
    (event,) = events_for(inbox, "PaymentAuthorized", order["order_id"])
    data = event["detail"]["data"]
    assert (data["attempt_id"], data["amount"], data["order_status"]) == (
        attempt["attempt_id"],
        order["total"],
        "Paid",
    )
    listed = customer.get(f"/orders/{order['order_id']}/payments").json()["items"]
    assert [(a["attempt_id"], a["status"]) for a in listed] == [(attempt["attempt_id"], "Authorized")]


def test_a_declined_payment_publishes_payment_declined_and_leaves_the_order_placed(
    customer: Client, admin: Client, inbox: EventInbox
) -> None:
    # given
    order = ordered(customer, admin, DECLINED)
    # when
    attempt = pay(customer, order)
    # then
    (event,) = events_for(inbox, "PaymentDeclined", order["order_id"])
    assert (event["detail"]["data"]["attempt_id"], event["detail"]["data"]["decline_code"]) == (
        attempt["attempt_id"],
        "2004",
    )
    assert status_of(customer, order) == "Placed"
    (listed,) = customer.get(f"/orders/{order['order_id']}/payments").json()["items"]
    assert (listed["status"], listed["decline_code"]) == ("Declined", "2004")
    # and the order takes another attempt
    assert pay(customer, order)["status"] == "Pending"


def test_an_unavailable_provider_is_retried_then_parked_in_the_dlq_with_the_attempt_pending(
    local_stack: LocalStack, customer: Client, admin: Client, ops: Client, quick_retries: None
) -> None:
    # given
    dead_letters = EventInbox(local_stack.aws("sqs"), queue_url(local_stack, "PaymentDLQ"))
    order = ordered(customer, admin, UNAVAILABLE)
    # when
    attempt = pay(customer, order)
    # then the message was received the template's number of times, calling the provider each time,
    # and then moved to the dead-letter queue
    task = {"order_id": order["order_id"], "attempt_id": attempt["attempt_id"]}
    assert dead_letters.wait_for(lambda body: body == task, timeout_s=SETTLE_S) == [task]
    assert sandbox_calls(local_stack, attempt["attempt_id"]) == max_receives()
    # and the attempt is still Pending: in the order's list, in the pending list, and in flight
    (listed,) = customer.get(f"/orders/{order['order_id']}/payments").json()["items"]
    assert listed["status"] == "Pending"
    pending = eventually(
        lambda: ops.get("/payments", params={"status": "Pending"}).json()["items"],
        lambda items: attempt["attempt_id"] in [a["attempt_id"] for a in items],
    )
    assert attempt["attempt_id"] in [a["attempt_id"] for a in pending]
    again = customer.post(
        f"/orders/{order['order_id']}/payments",
        json={"amount": order["total"], "payment_method": "tok_sandbox_visa"},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert (again.status_code, again.json()["type"]) == (409, "https://shopfeed.dev/problems/payment-in-progress")
    assert status_of(customer, order) == "Placed"


def test_a_payment_message_delivered_three_times_calls_the_provider_once(
    local_stack: LocalStack, customer: Client, admin: Client
) -> None:
    # given a payment the worker has settled
    order = ordered(customer, admin, APPROVED)
    attempt = pay(customer, order)
    assert eventually(lambda: status_of(customer, order), lambda s: s == "Paid") == "Paid"
    received = worker_receipts(local_stack)
    # when its message is delivered twice more
    body = PaymentTask(order_id=order["order_id"], attempt_id=attempt["attempt_id"]).model_dump_json()
    sqs = local_stack.aws("sqs")
    for _ in range(2):
        sqs.send_message(QueueUrl=queue_url(local_stack, "PaymentQueue"), MessageBody=body)
    # then the worker received both, and the provider was called once for the attempt in all
    assert eventually(lambda: worker_receipts(local_stack), lambda n: n >= received + 2) >= received + 2
    assert sandbox_calls(local_stack, attempt["attempt_id"]) == 1
    assert status_of(customer, order) == "Paid"


# -- shipping ---------------------------------------------------------------------------------------


def test_a_paid_order_is_shipped_and_delivered_with_its_events(
    customer: Client, admin: Client, ops: Client, inbox: EventInbox
) -> None:
    # given a paid order
    order = ordered(customer, admin, APPROVED)
    pay(customer, order)
    assert eventually(lambda: status_of(customer, order), lambda s: s == "Paid") == "Paid"
    # when ops create a parcel and move it
    created = ops.post(
        f"/orders/{order['order_id']}/shipments",
        json={"carrier": "dhl", "tracking_number": "JD014600006281230704"},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert created.status_code == 201, created.text
    path = created.headers["Location"]
    shipped = ops.request("PATCH", path, json={"status": "Shipped"}, headers={"If-Match": created.headers["ETag"]})
    assert shipped.status_code == 200, shipped.text
    delivered = ops.request("PATCH", path, json={"status": "Delivered"}, headers={"If-Match": shipped.headers["ETag"]})
    assert delivered.status_code == 200, delivered.text
    # then the order followed, and the subscriber heard of both moves of both
    assert status_of(customer, order) == "Delivered"
    moves = inbox.wait_for(
        lambda e: e["detail-type"] == "OrderStatusChanged" and e["detail"]["data"]["order_id"] == order["order_id"],
        count=2,
        timeout_s=SETTLE_S,
    )
    assert {(e["detail"]["data"]["previous_status"], e["detail"]["data"]["status"]) for e in moves} == {
        ("Paid", "Shipped"),
        ("Shipped", "Delivered"),
    }
    parcels = inbox.wait_for(
        lambda e: e["detail-type"] == "ShipmentStatusChanged" and e["detail"]["data"]["order_id"] == order["order_id"],
        count=2,
        timeout_s=SETTLE_S,
    )
    assert sorted(e["detail"]["data"]["status"] for e in parcels) == ["Delivered", "Shipped"]
    # and the customer sees the parcel, ops see it on the dashboard
    (mine,) = customer.get(f"/orders/{order['order_id']}/shipments").json()["items"]
    assert (mine["status"], mine["tracking_number"]) == ("Delivered", "JD014600006281230704")
    month = mine["updated_at"][:7]
    dashboard = eventually(
        lambda: ops.get("/shipments", params={"status": "Delivered", "carrier": "dhl", "month": month}).json(),
        lambda page: mine["shipment_id"] in [s["shipment_id"] for s in page["items"]],
    )
    assert mine["shipment_id"] in [s["shipment_id"] for s in dashboard["items"]]
