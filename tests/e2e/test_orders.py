"""An order's whole life over HTTP, through the local stack: API, DynamoDB, stream, relay, bus, queue."""

import re
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import Client, EventInbox

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


def order_body(product: dict[str, Any], quantity: int) -> dict[str, Any]:
    return {"lines": [{"product_id": product["product_id"], "quantity": quantity, "unit_price": product["price"]}]}


def place(customer: Client, body: dict[str, Any], key: str | None = None) -> Any:
    return customer.post("/orders", json=body, headers={"Idempotency-Key": key or str(uuid.uuid4())})


def events_of(inbox: EventInbox, event_type: str, order_id: str) -> list[dict[str, Any]]:
    return inbox.wait_for(lambda e: e["detail-type"] == event_type and e["detail"]["data"]["order_id"] == order_id)


def test_placing_an_order_publishes_order_placed_exactly_as_written(
    customer: Client, product: dict[str, Any], inbox: EventInbox
) -> None:
    # when a customer orders two of a product
    placed = place(customer, order_body(product, 2))

    # then the order is created
    assert placed.status_code == 201, placed.text
    order = placed.json()
    assert order["status"] == "Placed"
    assert order["total"] == {"amount": 5000, "currency": "EUR"}
    assert placed.headers["Location"] == f"/orders/{order['order_id']}"

    # and OrderPlaced reaches the subscriber queue with the outbox's detail, under a stable event id
    (event,) = events_of(inbox, "OrderPlaced", order["order_id"])
    assert event["source"] == "shopfeed.commerce"
    assert event["detail"]["metadata"]["event_type"] == "OrderPlaced"
    assert event["detail"]["metadata"]["aggregate_id"] == order["order_id"]
    assert ULID.match(event["detail"]["metadata"]["event_id"])
    assert event["detail"]["data"] == {
        "order_id": order["order_id"],
        "user_id": order["user_id"],
        "placed_at": order["placed_at"],
        "total": order["total"],
        "lines": [{"product_id": product["product_id"], "quantity": 2, "unit_price": product["price"]}],
    }


def test_a_retried_order_answers_the_original_and_orders_nothing_more(
    customer: Client, admin: Client, product: dict[str, Any], inbox: EventInbox
) -> None:
    # given an order placed with an Idempotency-Key
    first = place(customer, order_body(product, 1), key="retry-me")
    assert first.status_code == 201, first.text

    # when the client retries it with the same key and body
    replay = place(customer, order_body(product, 1), key="retry-me")

    # then it gets the same answer, marked as a replay, and stock moved once
    assert (replay.status_code, replay.json()) == (201, first.json())
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert admin.get(f"/products/{product['product_id']}").json()["available"] == 9

    # and the same key with another body is refused
    assert place(customer, order_body(product, 3), key="retry-me").status_code == 422

    # and one OrderPlaced was published for it
    assert len(events_of(inbox, "OrderPlaced", first.json()["order_id"])) == 1


def test_cancelling_restocks_and_publishes_order_cancelled(
    customer: Client, admin: Client, product: dict[str, Any], inbox: EventInbox
) -> None:
    # given a placed order of three
    order = place(customer, order_body(product, 3)).json()
    assert admin.get(f"/products/{product['product_id']}").json()["available"] == 7

    # when the customer cancels it
    cancelled = customer.post(f"/orders/{order['order_id']}/cancel")

    # then it is cancelled and the stock is back
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "Cancelled"
    assert admin.get(f"/products/{product['product_id']}").json()["available"] == 10

    # and OrderCancelled reaches the subscriber queue as written
    (event,) = events_of(inbox, "OrderCancelled", order["order_id"])
    assert event["detail"]["data"] == {
        "order_id": order["order_id"],
        "user_id": order["user_id"],
        "cancelled_at": cancelled.json()["updated_at"],
        "cancelled_by": order["user_id"],
        "restocked": [{"product_id": product["product_id"], "quantity": 3, "unit_price": product["price"]}],
    }


def test_orders_are_listed_for_their_customer_and_for_ops(
    customer: Client, ops: Client, product: dict[str, Any]
) -> None:
    # given two orders
    ids = [place(customer, order_body(product, 1)).json()["order_id"] for _ in range(2)]

    # when the customer lists theirs, and ops lists this month's placed orders
    mine = customer.get("/users/me/orders")
    placed = ops.get("/orders", params={"status": "Placed"})

    # then both lists have them, newest first
    assert mine.status_code == 200, mine.text
    assert [o["order_id"] for o in mine.json()["items"]] == ids[::-1]
    assert placed.status_code == 200, placed.text
    listed = [o["order_id"] for o in placed.json()["items"]]
    assert [i for i in listed if i in ids] == ids[::-1]

    # and an order with its lines reads back
    read = customer.get(f"/orders/{ids[0]}")
    assert read.status_code == 200
    assert read.headers["ETag"] == '"1"'
    assert read.json()["lines"][0]["product_id"] == product["product_id"]
    assert customer.get(f"/orders/{ids[0]}/lines").json()["items"][0]["quantity"] == 1


def test_a_plain_user_cannot_list_orders_by_status(customer: Client) -> None:
    assert customer.get("/orders", params={"status": "Placed"}).status_code == 403


def test_short_stock_orders_nothing(customer: Client, admin: Client, product: dict[str, Any]) -> None:
    # when a customer orders more than there is
    refused = place(customer, order_body(product, 11))

    # then the answer names the product and the stock is untouched
    assert refused.status_code == 409
    assert refused.headers["Content-Type"] == "application/problem+json"
    assert refused.json()["products"][0]["product_id"] == product["product_id"]
    assert admin.get(f"/products/{product['product_id']}").json()["available"] == 10
