"""Customer emails over HTTP against the local stack: an order placed through the API reaches the
customer as one email at ``/__local/mail`` (the stack's SES sink), through the outbox, the bus, the
template's EmailRule, EmailQueue and the order email worker; the same event delivered again sends
nothing more."""

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.conftest import Client, EventInbox, LocalStack
from tests.e2e.test_orders import events_of, order_body, place

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

SETTLE_S = 60  # a stream poll, the relay, the bus, a queue poll: seconds each here


def eventually[T](read: Callable[[], T], done: Callable[[T], bool], within: float = SETTLE_S) -> T:
    deadline = time.monotonic() + within
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.3)


def mail_about(stack: LocalStack, order_id: str) -> list[dict[str, Any]]:
    messages = stack.http.get(f"{stack.url}/__local/mail", timeout=10).json()["messages"]
    return [m for m in messages if order_id in m["subject"]]


def email_deliveries(stack: LocalStack) -> int:
    (poller,) = [p for p in stack.page()["pollers"] if p["function"] == "OrderEmailFunction"]
    return int(poller["stats"]["invocations"])  # counted once the invocation returned


def test_an_order_placed_reaches_its_customer_as_one_email_however_often_its_event_comes(
    local_stack: LocalStack, customer: Client, product: dict[str, Any], inbox: EventInbox
) -> None:
    # given an order placed through the API
    placed = place(customer, order_body(product, 2))
    assert placed.status_code == 201, placed.text
    order_id = placed.json()["order_id"]
    # then its customer gets the placed email, with the event's id
    (email,) = eventually(lambda: mail_about(local_stack, order_id), bool)
    (event,) = events_of(inbox, "OrderPlaced", order_id)
    user = placed.json()["user_id"]
    assert email["to"] == [f"{user.lower()}@example.com"]
    assert email["subject"] == f"Your order {order_id} is placed"
    assert email["event_id"] == event["detail"]["metadata"]["event_id"]
    assert email["body"].startswith("Hello E2E Customer,")
    # when the same event reaches EmailQueue once more (as a duplicate delivery would bring it)
    before = email_deliveries(local_stack)
    queue_url = local_stack.page()["resources"]["EmailQueue"]["QueueUrl"]
    local_stack.aws("sqs").send_message(QueueUrl=queue_url, MessageBody=json.dumps(event))
    assert eventually(lambda: email_deliveries(local_stack), lambda n: n > before) > before
    # then the worker took it and sent nothing more
    assert len(mail_about(local_stack, order_id)) == 1
