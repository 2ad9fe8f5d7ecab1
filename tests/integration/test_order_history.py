"""Order status history (HISTORY) against moto: every move of an order writes exactly one history item,
inside the move's own TransactWriteItems; a refused move writes none; ``GET /orders/{id}/history`` reads
them oldest first in one Query, for the owner and ops only."""

from typing import Any

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, idempotency_key, line, pages, place_order, placed_order
from local.harness.tables import table_items
from shopfeed.commerce import items, keys
from shopfeed.commerce.models import PAYMENTS_ACTOR
from shopfeed.platform import dynamo
from tests.integration.test_shipments import move, moved, paid_order, shipped
from tests.support.calls import CallLog, dynamodb_calls
from tests.support.payments import PaymentChain

pytestmark = pytest.mark.usefixtures("shop")


def history_puts(calls: CallLog) -> list[list[dict[str, Any]]]:
    """Per TransactWriteItems the code sent, the history items it put (deserialized)."""
    found = []
    for operation, request in calls.requests:
        if operation != "TransactWriteItems":
            continue
        puts = [op["Put"]["Item"] for op in request["TransactItems"] if "Put" in op]
        found.append([dynamo.deserialize(put) for put in puts if put["SK"]["S"].startswith(keys.HISTORY)])
    return found


def stored_history(order_id: str) -> list[dict[str, Any]]:
    return [
        i
        for i in table_items()
        if i["entity_type"] == items.ORDER_HISTORY and i["PK"] == keys.order_partition(order_id)
    ]


def moves(client: ApiClient, order_id: str) -> list[tuple[str | None, str, str, str]]:
    answer = client.get(f"/orders/{order_id}/history")
    assert answer.status == 200, answer.text
    return [(m["from_status"], m["to_status"], m["by"], m["reason"]) for m in answer.json["items"]]


# -- every move writes one, in its own transaction --------------------------------------------------


def test_placing_writes_the_first_move_in_the_placing_transaction(commerce_api: ApiClient) -> None:
    # when
    with dynamodb_calls() as calls:
        order = placed_order(commerce_api, line())
    # then: one round trip, and it held exactly one history item
    assert calls.operations == ["BatchGetItem", "TransactWriteItems"]  # the stock layouts, then the order
    [[written]] = history_puts(calls)
    assert written["SK"] == f"{keys.HISTORY}000001"
    assert (written["order_id"], written["user_id"], written["version"]) == (order["order_id"], "U100", 1)
    assert "from_status" not in written
    assert (written["to_status"], written["by"], written["reason"], written["at"]) == (
        "Placed",
        "U100",
        "placed",
        order["placed_at"],
    )


def test_cancelling_writes_one_move_in_the_cancelling_transaction_and_a_repeat_writes_none(
    commerce_api: ApiClient,
) -> None:
    # given
    order = placed_order(commerce_api, line())
    # when
    with dynamodb_calls() as calls:
        assert commerce_api.post(f"/orders/{order['order_id']}/cancel").status == 200
    with dynamodb_calls() as again:
        assert commerce_api.post(f"/orders/{order['order_id']}/cancel").status == 200
    # then
    assert calls.counts()["TransactWriteItems"] == 1
    [[written]] = history_puts(calls)
    assert (written["from_status"], written["to_status"], written["version"]) == ("Placed", "Cancelled", 2)
    assert history_puts(again) == []
    assert moves(commerce_api, order["order_id"]) == [
        (None, "Placed", "U100", "placed"),
        ("Placed", "Cancelled", "U100", "cancelled by its owner"),
    ]


def test_ops_cancelling_is_recorded_as_ops(commerce_api: ApiClient, ops: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    # when
    assert ops.post(f"/orders/{order['order_id']}/cancel").status == 200
    # then
    assert moves(commerce_api, order["order_id"])[-1] == ("Placed", "Cancelled", "U-OPS", "cancelled by ops")


def test_the_payment_worker_writes_the_paid_move_with_the_settlement(
    commerce_api: ApiClient, payment_chain: PaymentChain
) -> None:
    # given
    order = placed_order(commerce_api, line())
    body = {"amount": order["total"], "payment_method": "tok_sandbox_visa"}
    started = commerce_api.post(f"/orders/{order['order_id']}/payments", body, headers=idempotency_key())
    assert started.status == 202
    # when
    with dynamodb_calls() as calls:
        payment_chain.run()
    # then: the settling transaction is the one that holds the move
    settling = [puts for puts in history_puts(calls) if puts]
    assert len(settling) == 1
    [[written]] = settling
    assert (written["from_status"], written["to_status"], written["version"], written["by"], written["reason"]) == (
        "Placed",
        "Paid",
        2,
        PAYMENTS_ACTOR,
        f"payment {started.json['attempt_id']} authorized",
    )


def test_a_declined_payment_is_no_move_and_writes_no_history(
    commerce_api: ApiClient, admin: ApiClient, payment_chain: PaymentChain
) -> None:
    # given: an amount the sandbox declines
    create_product(admin, "P-DECLINED", price=250_000, available=5)
    order = placed_order(commerce_api, line("P-DECLINED", price=250_000))
    body = {"amount": order["total"], "payment_method": "tok_sandbox_visa"}
    assert commerce_api.post(f"/orders/{order['order_id']}/payments", body, headers=idempotency_key()).status == 202
    # when
    payment_chain.run()
    # then
    assert commerce_api.get(f"/orders/{order['order_id']}").json["status"] == "Placed"
    assert [m[1] for m in moves(commerce_api, order["order_id"])] == ["Placed"]


def test_shipping_delivering_and_returning_each_write_one_move_with_the_parcel(
    commerce_api: ApiClient, ops: ApiClient, payment_chain: PaymentChain
) -> None:
    # given
    order = paid_order(commerce_api, payment_chain)
    parcel = shipped(ops, order)
    written: list[list[dict[str, Any]]] = []
    # when
    for status in ("Shipped", "Delivered", "Returned"):
        with dynamodb_calls() as calls:
            parcel = moved(ops, parcel, status)
        assert calls.counts()["TransactWriteItems"] == 1
        written += history_puts(calls)
    # then: one move per transaction, versions following on (the return starts the payment's refund)
    (payment,) = commerce_api.get(f"/orders/{order['order_id']}/payments").json["items"]
    refund_id = payment["refund"]["refund_id"]
    assert [[(w["from_status"], w["to_status"], w["version"]) for w in puts] for puts in written] == [
        [("Paid", "Shipped", 3)],
        [("Shipped", "Delivered", 4)],
        [("Delivered", "Returned", 5)],
    ]
    assert moves(commerce_api, order["order_id"]) == [
        (None, "Placed", "U100", "placed"),
        ("Placed", "Paid", PAYMENTS_ACTOR, moves(commerce_api, order["order_id"])[1][3]),
        ("Paid", "Shipped", "U-OPS", f"shipment {parcel['shipment_id']} shipped"),
        ("Shipped", "Delivered", "U-OPS", f"shipment {parcel['shipment_id']} delivered"),
        ("Delivered", "Returned", "U-OPS", f"shipment {parcel['shipment_id']} returned; refund {refund_id} started"),
    ]


def test_a_second_parcel_that_leaves_the_order_as_it_is_writes_no_move(
    commerce_api: ApiClient, ops: ApiClient, payment_chain: PaymentChain
) -> None:
    # given: two parcels; the order is Shipped by the first
    order = paid_order(commerce_api, payment_chain)
    first, second = shipped(ops, order), shipped(ops, order)
    moved(ops, first, "Shipped")
    # when
    with dynamodb_calls() as calls:
        moved(ops, second, "Shipped")
    # then
    assert history_puts(calls) == [[]]
    assert len(stored_history(order["order_id"])) == 3


# -- a refused move writes none ----------------------------------------------------------------------


def test_a_refused_placing_writes_no_history(commerce_api: ApiClient) -> None:
    # when: more than the 100 in stock
    answer = place_order(commerce_api, line(quantity=101))
    # then
    assert answer.status == 409
    assert [i for i in table_items() if i["entity_type"] == items.ORDER_HISTORY] == []


def test_a_cancel_refused_under_a_payment_in_flight_writes_no_history(commerce_api: ApiClient) -> None:
    # given: a payment started (the worker has not settled it)
    order = placed_order(commerce_api, line())
    body = {"amount": order["total"], "payment_method": "tok_sandbox_visa"}
    assert commerce_api.post(f"/orders/{order['order_id']}/payments", body, headers=idempotency_key()).status == 202
    # when
    answer = commerce_api.post(f"/orders/{order['order_id']}/cancel")
    # then
    assert answer.status == 409
    assert [i["to_status"] for i in stored_history(order["order_id"])] == ["Placed"]


def test_a_stale_shipment_move_writes_no_history(
    commerce_api: ApiClient, ops: ApiClient, payment_chain: PaymentChain
) -> None:
    # given
    order = paid_order(commerce_api, payment_chain)
    parcel = shipped(ops, order)
    # when: If-Match names a version the parcel no longer has
    answer = move(ops, parcel, "Shipped", version=parcel["version"] + 1)
    # then
    assert answer.status == 412
    assert [i["to_status"] for i in stored_history(order["order_id"])] == ["Placed", "Paid"]


# -- GET /orders/{order_id}/history ------------------------------------------------------------------


def test_the_history_is_one_strong_query_of_the_order_partition_oldest_first(
    commerce_api: ApiClient, ops: ApiClient
) -> None:
    # given
    order = placed_order(commerce_api, line())
    commerce_api.post(f"/orders/{order['order_id']}/cancel")
    # when
    with dynamodb_calls() as calls:
        answer = ops.get(f"/orders/{order['order_id']}/history")
    # then
    assert answer.status == 200
    assert calls.operations == ["Query"]
    [(_, query)] = calls.requests
    assert query["ConsistentRead"] is True
    assert query.get("ScanIndexForward", True) is True
    assert [(m["version"], m["to_status"]) for m in answer.json["items"]] == [(1, "Placed"), (2, "Cancelled")]
    assert answer.json["next_cursor"] is None


def test_the_history_pages_with_a_signed_cursor(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    commerce_api.post(f"/orders/{order['order_id']}/cancel")
    # when
    read = list(pages(commerce_api, f"/orders/{order['order_id']}/history", limit=1))
    # then
    assert [[m["to_status"] for m in page["items"]] for page in read] == [["Placed"], ["Cancelled"]]


def test_someone_elses_history_answers_like_a_missing_order(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    stranger = commerce_api.as_user("U-STRANGER")
    # when
    theirs = stranger.get(f"/orders/{order['order_id']}/history")
    missing = commerce_api.get("/orders/01J00000000000000000000000/history")
    # then
    assert (theirs.status, missing.status) == (404, 404)
    assert theirs.json["type"] == missing.json["type"]


def test_reading_an_order_never_reads_its_history(commerce_api: ApiClient) -> None:
    # given: an order with two history items beside its lines
    order = placed_order(commerce_api, line())
    commerce_api.post(f"/orders/{order['order_id']}/cancel")
    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.get(f"/orders/{order['order_id']}")
    # then: one Query, whose LINE#..META range holds no history sort key
    assert answer.status == 200
    assert answer.json["status"] == "Cancelled"
    assert calls.operations == ["Query"]
    [(_, query)] = calls.requests
    assert {keys.LINE, keys.META} <= {v["S"] for v in query["ExpressionAttributeValues"].values()}
    history = stored_history(order["order_id"])
    assert len(history) == 2
    assert not any(keys.LINE <= i["SK"] <= keys.META for i in history)
