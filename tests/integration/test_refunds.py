"""Refunds against moto: cancelling a paid order or returning its parcel starts the refund of its payment
in the same transaction; the commerce stream queues it on the template's PaymentQueue; the worker calls
the sandbox with the refund id as its idempotency key and records the answer with the order's move and
its event. Refunds are whole-payment and once (docs/data-model.md, decisions 103 and 104)."""

import uuid
from typing import Any

import pytest

from functions.payment_worker.app import lambda_handler as worker
from local.harness.client import ApiClient
from local.harness.factories import create_product, if_match, line, placed_order
from local.harness.tables import table_items
from shopfeed.commerce import events, items, keys
from shopfeed.commerce.models import PAYMENTS_ACTOR
from shopfeed.platform import clients, dynamo
from tests.integration.outbox_support import Subscriber
from tests.integration.test_order_history import moves
from tests.integration.test_payment_worker import WORKER, sqs_event
from tests.support.calls import dynamodb_calls
from tests.support.payments import PaymentChain, outage, refund_body, sandbox_calls
from tests.support.queue_time import QueueTime, queue_time

__all__ = ["queue_time"]

pytestmark = pytest.mark.usefixtures("shop")

REFUND_DECLINED_PRICE = 400_100  # the sandbox charges it, and declines its refund with code 4001
REFUND_UNAVAILABLE_PRICE = 500_050  # the sandbox charges it, and never answers its refund
EXCEEDS = "https://shopfeed.dev/problems/refund-exceeds-capture"


def item(key: dict[str, str]) -> dict[str, Any]:
    response = clients.dynamodb().get_item(TableName="CommerceTable", Key=dynamo.serialize(key), ConsistentRead=True)
    return dynamo.deserialize(response["Item"]) if "Item" in response else {}


def outbox(event_type: str) -> list[dict[str, Any]]:
    return [i for i in table_items() if i["entity_type"] == items.OUTBOX_EVENT and i["event_type"] == event_type]


def paid_order(client: ApiClient, chain: PaymentChain, *lines: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """An order paid through the whole chain; answers it and its authorized attempt's id."""
    order = placed_order(client, *(lines or (line(quantity=2),)))
    body = {"amount": order["total"], "payment_method": "tok_sandbox_visa"}
    started = client.post(f"/orders/{order['order_id']}/payments", body, headers={"Idempotency-Key": "pay"})
    assert started.status == 202, started.text
    chain.run()
    assert item(keys.order(order["order_id"]))["status"] == "Paid"
    return order, started.json["attempt_id"]


def priced_paid_order(
    client: ApiClient, admin: ApiClient, chain: PaymentChain, price: int
) -> tuple[dict[str, Any], str]:
    create_product(admin, f"P-PRICE-{price}", price=price, available=10)
    return paid_order(client, chain, line(f"P-PRICE-{price}", price=price))


def attempt_of(order: dict[str, Any], attempt_id: str) -> dict[str, Any]:
    return item(keys.payment_attempt(order["order_id"], attempt_id))


def new_parcel(ops: ApiClient, order: dict[str, Any]) -> dict[str, Any]:
    created = ops.post(
        f"/orders/{order['order_id']}/shipments", {"carrier": "dhl"}, headers={"Idempotency-Key": str(uuid.uuid4())}
    )
    assert created.status == 201, created.text
    return dict(created.json)


def move_parcel(ops: ApiClient, order: dict[str, Any], parcel: dict[str, Any], status: str) -> dict[str, Any]:
    path = f"/orders/{order['order_id']}/shipments/{parcel['shipment_id']}"
    moved = ops.patch(path, {"status": status}, headers=if_match(f'"{parcel["version"]}"'))
    assert moved.status == 200, moved.text
    return dict(moved.json)


# -- cancel after pay ---------------------------------------------------------------------------------


def test_cancelling_a_paid_order_refunds_its_payment_once_and_moves_it_to_refunded(
    commerce_api: ApiClient, admin: ApiClient, payment_chain: PaymentChain, subscriber: Subscriber
) -> None:
    # given a paid order
    order, attempt_id = paid_order(commerce_api, payment_chain)
    stock = admin.get("/products/P-RED-TSHIRT").json["available"]
    # when it is cancelled
    cancelled = commerce_api.post(f"/orders/{order['order_id']}/cancel")
    # then it is Cancelled and restocked, and its payment shows a Pending refund of the whole amount
    assert (cancelled.status, cancelled.json["status"]) == (200, "Cancelled")
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == stock + 2
    (listed,) = commerce_api.get(f"/orders/{order['order_id']}/payments").json["items"]
    refund = listed["refund"]
    assert (refund["status"], refund["amount"], refund["reason"]) == ("Pending", order["total"], "Cancelled")
    assert item(keys.order(order["order_id"]))[items.REFUND_PENDING] == refund["refund_id"]
    # when the chain runs (stream → queue → worker → stream → bus)
    payment_chain.run()
    # then the provider was called once, under the refund's id
    assert sandbox_calls(refund["refund_id"], ledger=keys.sandbox_refund) == 1
    # and the order is Refunded, out of the Cancelled status list, nothing in flight
    stored = item(keys.order(order["order_id"]))
    assert (stored["status"], stored["version"]) == ("Refunded", 4)
    assert stored["by_status_pk"].startswith("STATUS#Refunded#")
    assert items.REFUND_PENDING not in stored
    # and the payment shows its refund Refunded; the refunded total is the amount captured
    (listed,) = commerce_api.get(f"/orders/{order['order_id']}/payments").json["items"]
    assert listed["status"] == "Authorized"
    assert listed["refund"]["status"] == "Refunded"
    assert listed["refund"]["provider_reference"].startswith("sbr_")
    assert attempt_of(order, attempt_id)[items.REFUNDED] == order["total"]["amount"]
    # and PaymentRefunded (that detail-type: the customer-email worker listens for it) reached the bus once
    delivered = [e for e in subscriber.receive() if e["detail-type"] == events.PAYMENT_REFUNDED]
    assert [e["detail"]["data"] for e in delivered] == [
        {
            "order_id": order["order_id"],
            "attempt_id": attempt_id,
            "refund_id": refund["refund_id"],
            "user_id": "U100",
            "amount": order["total"],
            "reason": "Cancelled",
            "provider_reference": listed["refund"]["provider_reference"],
            "refunded_at": listed["refund"]["updated_at"],
            "order_status": "Refunded",
        }
    ]
    assert commerce_api.get(f"/orders/{order['order_id']}").json["status"] == "Refunded"
    # and the order's history has both moves, each written by its own transaction
    assert moves(commerce_api, order["order_id"])[-2:] == [
        ("Paid", "Cancelled", "U100", f"cancelled by its owner; refund {refund['refund_id']} started"),
        ("Cancelled", "Refunded", PAYMENTS_ACTOR, f"refund {refund['refund_id']} of payment {attempt_id} refunded"),
    ]


def test_cancelling_a_paid_order_takes_four_round_trips_and_settling_its_refund_four(
    commerce_api: ApiClient, payment_chain: PaymentChain
) -> None:
    # given
    order, _ = paid_order(commerce_api, payment_chain)
    # when
    with dynamodb_calls() as cancel_calls:
        assert commerce_api.post(f"/orders/{order['order_id']}/cancel").status == 200
    (attempt,) = commerce_api.get(f"/orders/{order['order_id']}/payments").json["items"]
    message = refund_body(order["order_id"], attempt["attempt_id"], attempt["refund"]["refund_id"])
    with dynamodb_calls() as settle_calls:
        assert worker(sqs_event(message), WORKER) == {"batchItemFailures": []}
    # then the cancel: the order with its lines, its payment and parcels, one transaction
    # (and its products' stock layouts: the units go back to the buckets they came from)
    assert cancel_calls.operations == ["Query", "Query", "BatchGetItem", "TransactWriteItems"]
    # and the refund: the attempt (strong), the order, the provider (the sandbox's ledger), one transaction
    assert settle_calls.operations == ["GetItem", "Query", "UpdateItem", "TransactWriteItems"]


def test_a_refund_message_delivered_three_times_calls_the_provider_once(
    commerce_api: ApiClient, payment_chain: PaymentChain
) -> None:
    # given a refund whose message went through the chain once
    order, attempt_id = paid_order(commerce_api, payment_chain)
    assert commerce_api.post(f"/orders/{order['order_id']}/cancel").status == 200
    payment_chain.run()
    refund_id = attempt_of(order, attempt_id)["refund"]["refund_id"]
    # when the same message comes twice more, through the queue and its poller (SQS delivers at least once)
    body = refund_body(order["order_id"], attempt_id, refund_id)
    payment_chain.line.send([body, body])
    with dynamodb_calls() as calls:
        payment_chain.line.drain()
    # then the worker read the attempt each time and went no further
    assert payment_chain.line.delivered.count(body) == 3
    assert sandbox_calls(refund_id, ledger=keys.sandbox_refund) == 1
    assert calls.operations == ["GetItem", "GetItem"]
    assert len(outbox(events.PAYMENT_REFUNDED)) == 1
    assert item(keys.order(order["order_id"]))["version"] == 4
    assert attempt_of(order, attempt_id)[items.REFUNDED] == order["total"]["amount"]


def test_cancelling_again_starts_no_second_refund(commerce_api: ApiClient, payment_chain: PaymentChain) -> None:
    # given a paid order cancelled once (its refund in flight)
    order, attempt_id = paid_order(commerce_api, payment_chain)
    assert commerce_api.post(f"/orders/{order['order_id']}/cancel").status == 200
    first = attempt_of(order, attempt_id)["refund"]
    # when it is cancelled again, before and after the refund
    again = commerce_api.post(f"/orders/{order['order_id']}/cancel")
    payment_chain.run()
    after = commerce_api.post(f"/orders/{order['order_id']}/cancel")
    # then the retry answers the cancelled order, and a refunded order is not cancellable; one refund
    assert (again.status, again.json["status"]) == (200, "Cancelled")
    assert (after.status, after.json["type"]) == (409, "https://shopfeed.dev/problems/invalid-transition")
    stored = attempt_of(order, attempt_id)
    assert stored["refund"]["refund_id"] == first["refund_id"]
    assert stored[items.REFUNDED] == order["total"]["amount"]
    assert len(outbox(events.PAYMENT_REFUNDED)) == 1


def test_a_refund_is_never_started_past_the_amount_captured(
    commerce_api: ApiClient, admin: ApiClient, payment_chain: PaymentChain
) -> None:
    # given a paid order whose payment was refunded already by other means (its total at the captured amount)
    order, attempt_id = paid_order(commerce_api, payment_chain)
    key = keys.payment_attempt(order["order_id"], attempt_id)
    clients.dynamodb().update_item(
        TableName="CommerceTable",
        Key=dynamo.serialize(key),
        UpdateExpression="SET refunded = :captured",
        ExpressionAttributeValues={":captured": {"N": str(order["total"]["amount"])}},
    )
    stock = admin.get("/products/P-RED-TSHIRT").json["available"]
    # when it is cancelled
    refused = commerce_api.post(f"/orders/{order['order_id']}/cancel")
    # then the attempt's condition refused the refund, and with it the whole cancel: nothing was written
    assert (refused.status, refused.json["type"]) == (409, EXCEEDS)
    assert (refused.json["captured"], refused.json["refunded"]) == (order["total"]["amount"],) * 2
    assert item(keys.order(order["order_id"]))["status"] == "Paid"
    assert "refund" not in attempt_of(order, attempt_id)
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == stock
    assert outbox(events.ORDER_CANCELLED) == []


# -- parcels ----------------------------------------------------------------------------------------------


def test_a_parcel_not_shipped_is_cancelled_with_its_paid_order(
    commerce_api: ApiClient, ops: ApiClient, payment_chain: PaymentChain
) -> None:
    # given a paid order with a parcel Created, not shipped
    order, _ = paid_order(commerce_api, payment_chain)
    parcel = new_parcel(ops, order)
    # when the order is cancelled
    assert commerce_api.post(f"/orders/{order['order_id']}/cancel").status == 200
    # then the parcel is Cancelled with it (a new version, in the dashboard's Cancelled list), and can never ship
    stored = item(keys.shipment(order["order_id"], parcel["shipment_id"]))
    assert (stored["status"], stored["version"]) == ("Cancelled", 2)
    assert stored["shipping_pk"].startswith("SHIPPING#Cancelled#dhl#")
    path = f"/orders/{order['order_id']}/shipments/{parcel['shipment_id']}"
    shipped = ops.patch(path, {"status": "Shipped"}, headers=if_match('"2"'))
    assert shipped.status == 409, shipped.text


def test_a_shipped_order_cannot_be_cancelled(
    commerce_api: ApiClient, ops: ApiClient, payment_chain: PaymentChain
) -> None:
    # given a paid order whose parcel shipped
    order, attempt_id = paid_order(commerce_api, payment_chain)
    move_parcel(ops, order, new_parcel(ops, order), "Shipped")
    # when
    refused = commerce_api.post(f"/orders/{order['order_id']}/cancel")
    # then
    assert (refused.status, refused.json["type"]) == (409, "https://shopfeed.dev/problems/invalid-transition")
    assert "refund" not in attempt_of(order, attempt_id)


def test_a_returned_parcel_refunds_the_whole_payment_once(
    commerce_api: ApiClient, ops: ApiClient, payment_chain: PaymentChain, subscriber: Subscriber
) -> None:
    # given a paid order shipped in two parcels
    order, attempt_id = paid_order(commerce_api, payment_chain)
    parcels = [new_parcel(ops, order), new_parcel(ops, order)]
    first, second = (move_parcel(ops, order, parcel, "Shipped") for parcel in parcels)
    # when the first comes back
    move_parcel(ops, order, first, "Returned")
    # then the order is Returned with its refund in flight, and the chain refunds it
    assert item(keys.order(order["order_id"]))["status"] == "Returned"
    payment_chain.run()
    stored = attempt_of(order, attempt_id)
    assert (stored["refund"]["status"], stored["refund"]["reason"]) == ("Refunded", "Returned")
    assert item(keys.order(order["order_id"]))["status"] == "Refunded"
    # when the second comes back too
    move_parcel(ops, order, second, "Returned")
    payment_chain.run()
    # then nothing more is refunded: refunds are whole-payment, once (refunded == captured, never more)
    assert attempt_of(order, attempt_id)[items.REFUNDED] == order["total"]["amount"]
    assert sandbox_calls(stored["refund"]["refund_id"], ledger=keys.sandbox_refund) == 1
    assert [e["detail"]["data"]["reason"] for e in subscriber.receive() if e["detail-type"] == "PaymentRefunded"] == [
        "Returned"
    ]


# -- the provider declines or does not answer ------------------------------------------------------------


def test_a_declined_refund_ends_failed_and_visible_with_nothing_refunded(
    commerce_api: ApiClient, admin: ApiClient, payment_chain: PaymentChain, subscriber: Subscriber
) -> None:
    # given a paid order whose refund the sandbox declines
    order, attempt_id = priced_paid_order(commerce_api, admin, payment_chain, REFUND_DECLINED_PRICE)
    # when it is cancelled and the chain runs
    assert commerce_api.post(f"/orders/{order['order_id']}/cancel").status == 200
    payment_chain.run()
    # then the refund is Failed with the provider's code, shown with its payment; the order stays Cancelled
    (listed,) = commerce_api.get(f"/orders/{order['order_id']}/payments").json["items"]
    assert (listed["refund"]["status"], listed["refund"]["decline_code"]) == ("Failed", "4001")
    stored = item(keys.order(order["order_id"]))
    assert (stored["status"], stored["version"]) == ("Cancelled", 3)
    assert items.REFUND_PENDING not in stored
    assert [m[1] for m in moves(commerce_api, order["order_id"])] == ["Placed", "Paid", "Cancelled"]
    # and nothing counts as refunded; RefundDeclined reached the bus, PaymentRefunded did not
    assert attempt_of(order, attempt_id)[items.REFUNDED] == 0
    types = [e["detail-type"] for e in subscriber.receive()]
    assert (types.count(events.REFUND_DECLINED), types.count(events.PAYMENT_REFUNDED)) == (1, 0)


def test_an_unavailable_provider_holds_the_refund_back_then_parks_it_still_pending(
    commerce_api: ApiClient, admin: ApiClient, payment_chain: PaymentChain, queue_time: QueueTime
) -> None:
    # given a paid order whose refund the sandbox never answers
    order, attempt_id = priced_paid_order(commerce_api, admin, payment_chain, REFUND_UNAVAILABLE_PRICE)
    assert commerce_api.post(f"/orders/{order['order_id']}/cancel").status == 200
    refund_id = attempt_of(order, attempt_id)["refund"]["refund_id"]
    # when the chain runs through the outage
    calls = outage(payment_chain, queue_time, refund_id, ledger=keys.sandbox_refund)
    # then each receive called the provider once, after the backoff of the one before; the message is parked
    assert calls == [1, 2, 3, 4, 5, 5]
    assert payment_chain.line.dead_letters() == [refund_body(order["order_id"], attempt_id, refund_id)]
    # and the refund is still Pending, shown with its payment; the order Cancelled with it in flight
    (listed,) = commerce_api.get(f"/orders/{order['order_id']}/payments").json["items"]
    assert listed["refund"]["status"] == "Pending"
    assert item(keys.order(order["order_id"]))[items.REFUND_PENDING] == refund_id
