"""Payments over HTTP against moto: starting an attempt (202), its refusals, ECOM-006 and ECOM-007, and the
cancel guard while a payment is in flight. The worker's side is tests/integration/test_payment_worker.py."""

from typing import Any

import pytest

from local.harness.client import Answer, ApiClient
from local.harness.factories import line, money, pages, placed_order
from local.harness.tables import table_items
from shopfeed.commerce import items, keys
from shopfeed.platform import clients, dynamo
from tests.support.calls import dynamodb_calls

pytestmark = pytest.mark.usefixtures("shop")

TOKEN = "tok_sandbox_visa"
PAYMENT_IN_PROGRESS = "https://shopfeed.dev/problems/payment-in-progress"
NOT_PAYABLE = "https://shopfeed.dev/problems/order-not-payable"
AMOUNT_MISMATCH = "https://shopfeed.dev/problems/payment-amount-mismatch"


def pay(
    client: ApiClient,
    order: dict[str, Any],
    key: str = "pay-1",
    amount: dict[str, Any] | None = None,
    method: str = TOKEN,
) -> Answer:
    body = {"amount": amount or order["total"], "payment_method": method}
    return client.post(f"/orders/{order['order_id']}/payments", body, headers={"Idempotency-Key": key})


def attempts() -> list[dict[str, Any]]:
    return [i for i in table_items() if i["entity_type"] == items.PAYMENT_ATTEMPT]


def stored_order(order_id: str) -> dict[str, Any]:
    response = clients.dynamodb().get_item(TableName="CommerceTable", Key=dynamo.serialize(keys.order(order_id)))
    return dynamo.deserialize(response["Item"])


# -- starting a payment ----------------------------------------------------------------------------


def test_paying_an_order_accepts_a_pending_attempt_in_two_round_trips(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line(quantity=2))
    # when
    with dynamodb_calls() as calls:
        answer = pay(commerce_api, order)
    # then the attempt is accepted, Pending, for the order's total
    assert answer.status == 202, answer.text
    attempt = answer.json
    assert (attempt["order_id"], attempt["user_id"], attempt["status"]) == (order["order_id"], "U100", "Pending")
    assert attempt["amount"] == order["total"] == money(2 * 1999)
    assert "payment_method" not in attempt
    assert "Idempotent-Replayed" not in answer.headers
    # and the order is read once, then one transaction writes the attempt, the guard and the key
    assert calls.operations == ["Query", "TransactWriteItems"]
    (stored,) = attempts()
    assert stored["payment_method"] == TOKEN  # kept for the worker, never answered
    assert stored["pending_pk"].startswith(keys.PENDING)
    assert stored_order(order["order_id"])[items.PAYMENT_PENDING] == attempt["attempt_id"]


def test_a_retried_payment_answers_the_first_attempt_from_the_transaction_alone(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    first = pay(commerce_api, order, key="retry-pay")
    # when
    with dynamodb_calls() as calls:
        replay = pay(commerce_api, order, key="retry-pay")
    # then the same answer, marked as a replay, and one attempt only
    assert (replay.status, replay.json) == (202, first.json)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert calls.operations == ["Query", "TransactWriteItems"]
    assert len(attempts()) == 1


def test_the_same_key_with_another_body_is_refused(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    pay(commerce_api, order, key="reused")
    # when
    answer = pay(commerce_api, order, key="reused", method="tok_another_card")
    # then
    assert answer.status == 422
    assert answer.json["type"] == "https://shopfeed.dev/problems/idempotency-key-reused"
    assert len(attempts()) == 1


def test_a_payment_without_an_idempotency_key_is_refused_before_any_read(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    body = {"amount": order["total"], "payment_method": TOKEN}
    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.post(f"/orders/{order['order_id']}/payments", body)
    # then
    assert answer.status == 400
    assert answer.json["type"] == "https://shopfeed.dev/problems/idempotency-key-missing"
    assert len(calls) == 0


def test_a_second_payment_while_one_is_in_flight_is_refused_naming_it(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    first = pay(commerce_api, order, key="first").json
    # when
    second = pay(commerce_api, order, key="second")
    # then
    assert second.status == 409
    assert second.json["type"] == PAYMENT_IN_PROGRESS
    assert second.json["attempt_id"] == first["attempt_id"]
    assert len(attempts()) == 1


def test_an_amount_other_than_the_total_is_refused_with_the_total_and_writes_nothing(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line(quantity=3))
    # when
    answer = pay(commerce_api, order, amount=money(1999))
    # then
    assert answer.status == 409
    assert answer.json["type"] == AMOUNT_MISMATCH
    assert answer.json["order_total"] == money(3 * 1999)
    assert answer.json["quoted_amount"] == money(1999)
    assert attempts() == []
    assert items.PAYMENT_PENDING not in stored_order(order["order_id"])


def test_another_currency_is_another_amount(commerce_api: ApiClient) -> None:
    order = placed_order(commerce_api, line())
    answer = pay(commerce_api, order, amount=money(1999, "USD"))
    assert (answer.status, answer.json["type"]) == (409, AMOUNT_MISMATCH)


def test_a_cancelled_order_is_not_payable(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    assert commerce_api.post(f"/orders/{order['order_id']}/cancel").status == 200
    # when
    answer = pay(commerce_api, order)
    # then
    assert answer.status == 409
    assert (answer.json["type"], answer.json["order_status"]) == (NOT_PAYABLE, "Cancelled")
    assert attempts() == []


def test_someone_elses_order_is_not_found_and_ops_may_not_pay_it(commerce_api: ApiClient, ops: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    stranger = commerce_api.as_user("U-STRANGER")
    # when
    by_stranger = pay(stranger, order)
    by_ops = pay(ops, order)
    unknown = pay(commerce_api, {**order, "order_id": "01J00000000000000000000000"})
    # then
    assert (by_stranger.status, by_stranger.json["type"]) == (404, "https://shopfeed.dev/problems/not-found")
    assert (by_ops.status, by_ops.json["type"]) == (403, "https://shopfeed.dev/problems/forbidden")
    assert unknown.status == 404
    assert attempts() == []


@pytest.mark.parametrize("token", ["4111111111111111", "4111-1111-1111-1111", "", "tok with spaces", "x" * 256])
def test_a_card_number_or_a_malformed_token_is_refused_before_anything_is_read(
    commerce_api: ApiClient, token: str
) -> None:
    # given
    order = placed_order(commerce_api, line())
    # when
    with dynamodb_calls() as calls:
        answer = pay(commerce_api, order, method=token)
    # then the problem names the field, never the value
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"][-1] == "payment_method"
    assert token not in answer.text or token == ""
    assert len(calls) == 0


# -- the cancel guard ------------------------------------------------------------------------------


def test_an_order_with_a_payment_in_flight_cannot_be_cancelled(commerce_api: ApiClient, admin: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line(quantity=2))
    attempt = pay(commerce_api, order).json
    stock = admin.get("/products/P-RED-TSHIRT").json["available"]
    # when
    answer = commerce_api.post(f"/orders/{order['order_id']}/cancel")
    # then nothing moved: no cancel, no restock, no event
    assert answer.status == 409
    assert (answer.json["type"], answer.json["attempt_id"]) == (PAYMENT_IN_PROGRESS, attempt["attempt_id"])
    assert commerce_api.get(f"/orders/{order['order_id']}").json["status"] == "Placed"
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == stock
    assert [i["event_type"] for i in table_items() if i["entity_type"] == items.OUTBOX_EVENT] == ["OrderPlaced"]


# -- ECOM-006: an order's attempts -------------------------------------------------------------------


def decline_in_place(order_id: str, attempt_id: str) -> None:
    """What the worker's decline leaves (the attempt settled, the order payable again), written below
    the API so a test can make several attempts without the worker."""
    client = clients.dynamodb()
    client.update_item(
        TableName="CommerceTable",
        Key=dynamo.serialize(keys.payment_attempt(order_id, attempt_id)),
        UpdateExpression="SET #s = :d REMOVE pending_pk, pending_sk",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":d": dynamo.value("Declined")},
    )
    client.update_item(
        TableName="CommerceTable",
        Key=dynamo.serialize(keys.order(order_id)),
        UpdateExpression=f"REMOVE {items.PAYMENT_PENDING}",
    )


def paid_attempts(client: ApiClient, order: dict[str, Any], count: int) -> list[str]:
    """``count`` attempts of one order, each declined before the next; their ids, oldest first."""
    made = []
    for n in range(count):
        attempt = pay(client, order, key=f"attempt-{n}").json
        decline_in_place(order["order_id"], attempt["attempt_id"])
        made.append(attempt["attempt_id"])
    return made


def test_an_orders_attempts_are_listed_newest_first_five_a_page_with_one_strong_query(
    commerce_api: ApiClient,
) -> None:
    # given seven attempts
    order = placed_order(commerce_api, line())
    made = paid_attempts(commerce_api, order, 7)
    # when
    with dynamodb_calls() as calls:
        first = commerce_api.get(f"/orders/{order['order_id']}/payments")
    # then the newest five, and a cursor to the rest
    assert first.status == 200, first.text
    assert [a["attempt_id"] for a in first.json["items"]] == made[::-1][:5]
    assert [a["status"] for a in first.json["items"]] == ["Declined"] * 5
    assert calls.operations == ["Query"]
    every = [
        a["attempt_id"] for page in pages(commerce_api, f"/orders/{order['order_id']}/payments") for a in page["items"]
    ]
    assert every == made[::-1]


def test_the_attempts_query_is_strongly_consistent(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    pay(commerce_api, order)
    # when
    with dynamodb_calls() as calls:
        commerce_api.get(f"/orders/{order['order_id']}/payments")
    # then
    ((operation, params),) = calls.requests
    assert (operation, params["ConsistentRead"], params["ScanIndexForward"]) == ("Query", True, False)


def test_an_order_without_attempts_answers_an_empty_list_after_checking_the_order(commerce_api: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.get(f"/orders/{order['order_id']}/payments")
    # then the empty page costs one more read: the order's, to tell it from someone else's
    assert (answer.status, answer.json) == (200, {"items": [], "next_cursor": None})
    assert calls.operations == ["Query", "Query"]


def test_someone_elses_attempts_are_not_found_and_ops_sees_them(commerce_api: ApiClient, ops: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    attempt = pay(commerce_api, order).json
    path = f"/orders/{order['order_id']}/payments"
    # when / then
    assert commerce_api.as_user("U-STRANGER").get(path).status == 404
    assert commerce_api.get("/orders/01J00000000000000000000000/payments").status == 404
    assert [a["attempt_id"] for a in ops.get(path).json["items"]] == [attempt["attempt_id"]]


def test_a_cursor_of_another_order_is_refused(commerce_api: ApiClient) -> None:
    # given
    first, second = placed_order(commerce_api, line()), placed_order(commerce_api, line())
    paid_attempts(commerce_api, first, 2)
    cursor = commerce_api.get(f"/orders/{first['order_id']}/payments", query={"limit": 1}).json["next_cursor"]
    # when
    answer = commerce_api.get(f"/orders/{second['order_id']}/payments", query={"cursor": cursor})
    # then
    assert (answer.status, answer.json["type"]) == (400, "https://shopfeed.dev/problems/invalid-cursor")


# -- ECOM-007: pending attempts ----------------------------------------------------------------------


def test_pending_attempts_are_listed_oldest_first_across_every_shard(commerce_api: ApiClient, ops: ApiClient) -> None:
    # given ten pending attempts of ten orders, and one that is no longer pending
    orders = [placed_order(commerce_api, line()) for _ in range(11)]
    pending = [pay(commerce_api, order, key=f"k-{order['order_id']}").json["attempt_id"] for order in orders]
    decline_in_place(orders[3]["order_id"], pending[3])
    expected = pending[:3] + pending[4:]
    assert len({keys.pending_payment(a, "t")["pending_pk"] for a in expected}) > 1, "all in one shard"
    # when
    with dynamodb_calls() as calls:
        first = ops.get("/payments", query={"status": "Pending", "limit": 4})
    # then the oldest four, one Query per write shard, and every page after in order
    assert first.status == 200, first.text
    assert [a["attempt_id"] for a in first.json["items"]] == expected[:4]
    assert calls.counts() == {"Query": keys.PENDING_PAYMENT_SHARDS}
    walked = [a["attempt_id"] for page in pages(ops, "/payments", status="Pending", limit=4) for a in page["items"]]
    assert walked == expected
    assert {a["status"] for page in pages(ops, "/payments", status="Pending") for a in page["items"]} == {"Pending"}


def test_only_ops_list_pending_attempts_and_only_pending_ones(commerce_api: ApiClient, ops: ApiClient) -> None:
    assert commerce_api.get("/payments", query={"status": "Pending"}).status == 403
    assert ops.get("/payments", query={"status": "Authorized"}).status == 422
    assert ops.get("/payments").status == 422
