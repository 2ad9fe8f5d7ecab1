"""Customer emails on moto: events put on the bus reach EmailQueue through the template's EmailRule, the
order email worker takes them through the local stack's SQS poller (the template's mapping), SES is
moto's. One email per event id, however often the event comes; what can never be sent is skipped, what
SES did not take waits its backoff and ends in EmailDLQ."""

from collections.abc import Callable
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from shopfeed.commerce import bootstrap, keys
from shopfeed.commerce.emails.repository import NoticeStatus
from shopfeed.commerce.emails.worker import BACKOFF, START_MARGIN_MS
from shopfeed.platform import clients, dynamo
from shopfeed.platform.outbox import OutboxEvent
from tests.support.calls import dynamodb_calls
from tests.support.emails import (
    SENDER,
    EmailLine,
    expired,
    paid,
    placed,
    put_customer,
    put_item,
    refunded,
    sent_emails,
    status_changed,
)
from tests.support.queue_time import QueueTime, queue_time

__all__ = ["queue_time"]


@pytest.fixture
def emails(aws: None, monkeypatch: pytest.MonkeyPatch) -> EmailLine:
    line = EmailLine.create()
    monkeypatch.setenv("COMMERCE_TABLE_NAME", "CommerceTable")
    monkeypatch.setenv("EMAIL_QUEUE_URL", line.url)
    monkeypatch.setenv("EMAIL_SENDER", SENDER)
    return line


def guard(event: OutboxEvent) -> dict[str, Any] | None:
    found = clients.dynamodb().get_item(
        TableName="CommerceTable", Key=dynamo.serialize(keys.email_notice(event.event_id)), ConsistentRead=True
    )
    return dynamo.deserialize(found["Item"]) if "Item" in found else None


def reconnect() -> None:
    """New clients and ports, for an endpoint changed mid-test."""
    clients.reset()
    bootstrap.reset()


TOLD: list[tuple[Callable[[], OutboxEvent], str, str]] = [
    (placed, "Your order {order_id} is placed", "2 x P-RED-TSHIRT at 19.99 EUR\n  Total: 39.98 EUR"),
    (paid, "Payment received for order {order_id}", "We received your payment of 39.98 EUR"),
    (lambda: status_changed("Shipped"), "Your order {order_id} has shipped", "is on its way"),
    (refunded, "Refund for order {order_id}", "We refunded 19.99 EUR for order"),
    (expired, "Your order {order_id} has expired", "was not paid in time"),
]


@pytest.mark.parametrize(("make", "subject", "says"), TOLD, ids=["placed", "paid", "shipped", "refunded", "expired"])
def test_each_event_a_customer_hears_about_is_emailed_to_their_address_with_its_template(
    emails: EmailLine, make: Callable[[], OutboxEvent], subject: str, says: str
) -> None:
    # given a customer and an event of their order on the bus
    put_customer("U100", "ada@example.com", "Ada Lovelace")
    event = make()
    emails.publish(event)
    # when the worker takes the queue
    with dynamodb_calls() as calls:
        emails.drain()
    # then the customer got that event's email, from the configured sender
    order_id = event.detail["order_id"]
    (email,) = sent_emails()
    assert (email.to, email.sender, email.subject) == (["ada@example.com"], SENDER, subject.format(order_id=order_id))
    assert email.body.startswith("Hello Ada Lovelace,")
    assert says in email.body
    assert order_id in email.body
    # and the event's guard says sent, with SES's message id
    stored = guard(event)
    assert stored is not None
    assert (stored["status"], stored["entity_type"], stored["order_id"]) == ("Sent", "EmailNotice", order_id)
    assert stored["message_id"]
    assert "claimed_until" not in stored
    assert emails.dead_letters() == []
    # in three round trips: claim, the customer, settle
    assert calls.counts() == {"UpdateItem": 2, "GetItem": 1}


def test_an_event_put_on_the_bus_three_times_with_its_id_sends_one_email(emails: EmailLine) -> None:
    # given one event published three times (the outbox relay and its sweeper may both publish it:
    # each time EventBridge gives it a new id, the outbox's event id stays)
    put_customer("U100")
    event = placed()
    emails.publish(event)
    emails.publish(event)
    # when the worker takes them, and the event comes once more afterwards
    emails.drain()
    emails.publish(event)
    with dynamodb_calls() as calls:
        emails.drain()
    # then three messages were handled and one email went out
    assert len(emails.delivered) == 3
    assert len(sent_emails()) == 1
    assert emails.dead_letters() == []
    # and the late one cost one refused claim
    assert calls.counts() == {"UpdateItem": 1}


def test_a_message_whose_acknowledgement_was_lost_is_redelivered_by_the_poller_and_sends_nothing_more(
    emails: EmailLine,
) -> None:
    # given two events, and a poller whose first deletion of handled messages is lost
    put_customer("U100")
    put_customer("U200")
    emails.publish(placed("U100"), paid("U200"))
    poller = emails.poller()
    deletes = []
    really_delete = poller._delete

    def lose_the_first(records: list[dict[str, Any]]) -> None:
        if records:
            deletes.append(len(records))
        if len(deletes) > 1:
            really_delete(records)

    poller._delete = lose_the_first  # type: ignore[method-assign]
    # when the poller runs until the queue is empty: the handled messages come back (visibility 0)
    polls = 0
    while poller.poll():
        polls += 1
        assert polls < 10
    # then each message was delivered twice and each customer got one email
    assert len(emails.delivered) == 4
    assert sorted(email.to[0] for email in sent_emails()) == ["u100@example.com", "u200@example.com"]


def test_a_customer_without_an_address_is_skipped_and_the_queue_moves_on(emails: EmailLine) -> None:
    # given an event of a user who is no customer, and one of a customer whose address is empty
    put_customer("U300", email=None)
    put_item({**keys.user("U400"), "entity_type": "Customer", "user_id": "U400", "email": "", "name": "No One"})
    nobody, empty, told = placed("U-NOBODY"), placed("U400"), placed("U300")
    emails.publish(nobody, empty, told)
    # when the worker takes them
    emails.drain()
    # then only the customer with an address got an email; nothing failed or waits
    assert [email.to for email in sent_emails()] == [["u300@example.com"]]
    assert (emails.waiting(), emails.dead_letters()) == ([], [])
    # and the skipped events' guards say why, so a redelivery does not look again
    assert [guard(nobody)["status"], guard(empty)["status"]] == ["Skipped", "Skipped"]  # type: ignore[index]


def test_events_no_customer_hears_about_and_unreadable_messages_are_acknowledged_without_an_email(
    emails: EmailLine,
) -> None:
    # given a delivery (not a shipment), a foreign event on the queue, and a body that is no event
    put_customer("U100")
    delivered = status_changed("Delivered")
    emails.publish(delivered)
    emails.send(['{"detail-type": "InventoryCounted", "source": "shopfeed.commerce", "detail": {}}', "not json"])
    # when the worker takes them
    emails.drain()
    # then no email, no guard, nothing left on the queue or in its DLQ
    assert sent_emails() == []
    assert guard(delivered) is None
    assert len(emails.delivered) == 3
    assert (emails.waiting(), emails.dead_letters()) == ([], [])


def test_an_email_claimed_by_a_delivery_still_running_waits_and_one_whose_claim_ran_out_is_sent(
    emails: EmailLine, queue_time: QueueTime
) -> None:
    # given two events whose guards are claimed: one by a live delivery, one by a delivery that died
    put_customer("U100")
    live, dead = placed(), paid()
    for event, until in ((live, "2999-01-01T00:00:00.000Z"), (dead, "2000-01-01T00:00:00.000Z")):
        put_item(
            {
                **keys.email_notice(event.event_id),
                "entity_type": "EmailNotice",
                "status": NoticeStatus.SENDING.value,
                "claim": "another-delivery",
                "claimed_until": until,
                "claims": 1,
            }
        )
    emails.publish(live, dead)
    # when the worker takes them
    poller = emails.poller()
    assert poller.poll() == 2
    # then the dead claim is taken over and its email sent; the live one is held back, not sent
    assert [email.subject for email in sent_emails()] == [f"Payment received for order {dead.detail['order_id']}"]
    taken = guard(dead)
    assert taken is not None
    assert (taken["status"], taken["claims"]) == ("Sent", 2)
    assert poller.poll() == 0
    # and it comes back after its backoff, still waiting while the other delivery holds the claim
    queue_time.advance(BACKOFF.delay(1))
    assert poller.poll() == 1
    assert len(sent_emails()) == 1
    assert guard(live)["claim"] == "another-delivery"  # type: ignore[index]


def test_ses_failing_holds_the_email_back_longer_each_time_then_moves_it_to_the_dlq(
    emails: EmailLine, queue_time: QueueTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given SES out of reach (nothing listens on its endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SESV2", "http://127.0.0.1:9")
    reconnect()
    put_customer("U100")
    event = placed()
    emails.publish(event)
    poller = emails.poller()
    # when the worker takes it ten times, each time after the wait it was given
    waits = []
    for receive in range(1, 11):
        assert poller.poll() == 1, receive
        assert guard(event) is None, receive  # the claim is given back for the next delivery
        assert poller.poll() == 0, receive  # held back: nothing visible at once
        queue_time.advance(BACKOFF.delay(receive) - 1)
        assert poller.poll() == 0, receive  # not a second early
        queue_time.advance(1)
        waits.append(BACKOFF.delay(receive))
    # then it waited 30 s doubling to 15 minutes, and after the queue's 10 receives it is in EmailDLQ
    assert waits == [30, 60, 120, 240, 480, 900, 900, 900, 900, 900]
    assert poller.poll() == 0
    (dead,) = emails.dead_letters()
    assert '"event_id":"' + event.event_id in dead.replace(" ", "")
    assert sent_emails() == []
    # and once SES is back, a redrive from the DLQ sends it once
    monkeypatch.delenv("AWS_ENDPOINT_URL_SESV2")
    reconnect()
    emails.send([dead])
    emails.drain()
    assert len(sent_emails()) == 1


def test_a_customer_read_that_fails_gives_the_claim_back_and_the_retry_sends_once(
    emails: EmailLine, queue_time: QueueTime
) -> None:
    # given DynamoDB failing the worker's first read of the customer (after the claim)
    put_customer("U100")
    event = placed()
    emails.publish(event)
    reads: list[str] = []

    def fail_the_first_read(**_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
        reads.append("GetItem")
        if len(reads) > 1:
            return None
        error = {"Code": "InternalServerError", "Message": "Internal server error"}
        return AWSResponse("https://dynamodb.us-east-1.amazonaws.com/", 500, {}, None), {
            "Error": error,
            "ResponseMetadata": {"HTTPStatusCode": 500},
        }

    # (the shared client outlives the test: the hook goes with it)
    hooks = clients.dynamodb().meta.events
    hooks.register("before-call.dynamodb.GetItem", fail_the_first_read)
    poller = emails.poller()
    # when the worker takes it
    try:
        assert poller.poll() == 1
    finally:
        hooks.unregister("before-call.dynamodb.GetItem", fail_the_first_read)
    assert reads == ["GetItem"]
    # then nothing was sent and the claim was given back, not left to run out
    assert sent_emails() == []
    assert guard(event) is None
    # and after its backoff the message comes back and is sent, once, by a fresh claim (no takeover)
    queue_time.advance(BACKOFF.delay(1))
    assert poller.poll() == 1
    assert len(sent_emails()) == 1
    stored = guard(event)
    assert stored is not None
    assert (stored["status"], stored["claims"]) == ("Sent", 1)


def test_an_invocation_short_of_time_sends_its_first_email_and_leaves_the_rest_unclaimed_for_later(
    emails: EmailLine, queue_time: QueueTime
) -> None:
    # given three events, and a worker whose invocations have less time than one slow SES call needs
    put_customer("U100")
    first, second, third = placed(), paid(), expired()
    emails.publish(first, second, third)
    poller = emails.poller()
    poller.function.timeout_s = (START_MARGIN_MS - 1000) / 1000  # type: ignore[attr-defined]
    # when the worker takes the batch
    assert poller.poll() == 3
    # then one email went out, and the two others were not begun: no claim, held back on the queue
    assert len(sent_emails()) == 1
    assert sum(guard(event) is None for event in (first, second, third)) == 2
    assert poller.poll() == 0
    # and they come back after their backoff, one email per invocation until all are sent
    queue_time.advance(BACKOFF.delay(1))
    assert poller.poll() == 2
    assert len(sent_emails()) == 2
    queue_time.advance(BACKOFF.delay(2))
    assert poller.poll() == 1
    assert sorted(email.subject.split()[0] for email in sent_emails()) == ["Payment", "Your", "Your"]
    assert emails.dead_letters() == []
