"""Customer emails without AWS: events read from the bus's envelope, each type's template, money as a
customer reads it, and the SES adapter telling a send to retry from one never to retry (botocore's own
Stubber stands in for SES)."""

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from shopfeed.commerce import events
from shopfeed.commerce.emails.notices import (
    ORDER_EXPIRED,
    PAYMENT_REFUNDED,
    TEMPLATES,
    Notice,
    money,
    notice_from,
    template_for,
)
from shopfeed.commerce.emails.sender import EmailRejected, EmailUnavailable, SesSender

SAMPLE = Path(__file__).resolve().parents[2] / "events" / "sqs" / "order_email_event.json"


def sample_body() -> str:
    return str(json.loads(SAMPLE.read_text())["Records"][0]["body"])


def notice(event_type: str, **data: Any) -> Notice:
    return Notice(
        event_id="E1",
        event_type=event_type,
        order_id="O1",
        user_id="U1",
        data={"order_id": "O1", "user_id": "U1", **data},
    )


def test_the_sample_message_is_read_as_its_outbox_event_with_the_stable_id() -> None:
    # given the sample event of events/sqs/ (sam local invoke sends it too)
    read = notice_from(sample_body())
    # then the id is the outbox's, not EventBridge's
    assert (read.event_id, read.event_type, read.order_id, read.user_id) == (
        "01M8138JMSGYCV9FKFGGZVSFG2",
        events.ORDER_PLACED,
        "01M8138JMR4RTWVBPA7Z9CNNMC",
        "U100",
    )


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[]",
        '{"detail-type": "OrderPlaced", "detail": {}}',
        '{"detail-type": "OrderPlaced", "detail": {"metadata": {"event_id": "E1"}, "data": {"user_id": "U1"}}}',
        '{"detail-type": "OrderPlaced", "detail": {"metadata": {"event_id": ""}, "data": {"order_id": "O", '
        '"user_id": "U"}}}',
        '{"detail-type": "OrderPlaced", "detail": "text"}',
    ],
    ids=["not-json", "not-an-object", "no-metadata", "no-order", "empty-id", "detail-not-object"],
)
def test_a_message_that_is_not_a_commerce_event_is_refused_as_a_value_error(body: str) -> None:
    with pytest.raises(ValueError, match=r".+"):
        notice_from(body)


def test_the_sample_placed_order_renders_its_lines_and_total() -> None:
    read = notice_from(sample_body())
    template = template_for(read)
    assert template is not None
    email = template.render(read)
    assert email.subject == "Your order 01M8138JMR4RTWVBPA7Z9CNNMC is placed"
    assert email.body_for("Ada") == (
        "Hello Ada,\n\n"
        "Thank you for your order 01M8138JMR4RTWVBPA7Z9CNNMC. We hold its items for you until it is paid.\n\n"
        "  2 x P-RED-TSHIRT at 19.99 EUR\n  Total: 39.98 EUR\n\n"
        "The shopfeed team\n"
    )


@pytest.mark.parametrize(
    ("event_type", "data", "subject", "says"),
    [
        (events.PAYMENT_AUTHORIZED, {"amount": {"amount": 500, "currency": "EUR"}}, "Payment received", "5.00 EUR"),
        (events.ORDER_STATUS_CHANGED, {"status": "Shipped", "shipment_id": "S1"}, "has shipped", "shipment S1"),
        (PAYMENT_REFUNDED, {"amount": {"amount": 1999, "currency": "EUR"}}, "Refund for order O1", "19.99 EUR"),
        (ORDER_EXPIRED, {}, "has expired", "was not paid in time"),
    ],
    ids=["paid", "shipped", "refunded", "expired"],
)
def test_each_event_type_renders_its_own_template(
    event_type: str, data: dict[str, Any], subject: str, says: str
) -> None:
    template = template_for(notice(event_type, **data))
    assert template is not None
    email = template.render(notice(event_type, **data))
    assert subject in email.subject
    assert "O1" in email.subject
    assert says in email.text


@pytest.mark.parametrize("status", ["Delivered", "Returned", None])
def test_an_order_status_change_is_told_only_when_the_order_ships(status: str | None) -> None:
    assert template_for(notice(events.ORDER_STATUS_CHANGED, status=status)) is None
    assert template_for(notice(events.ORDER_STATUS_CHANGED, status="Shipped")) is not None


@pytest.mark.parametrize("event_type", [events.ORDER_CANCELLED, events.PAYMENT_DECLINED, "SomethingNew"])
def test_events_without_a_template_are_not_told(event_type: str) -> None:
    assert event_type not in TEMPLATES
    assert template_for(notice(event_type)) is None


@pytest.mark.parametrize(
    ("event_type", "data"),
    [(PAYMENT_REFUNDED, {}), (PAYMENT_REFUNDED, {"amount": "lots"}), (events.ORDER_PLACED, {"total": None})],
    ids=["refund-without-amount", "amount-not-money", "placed-without-lines"],
)
def test_an_event_lacking_what_its_template_shows_is_refused_as_a_value_error(
    event_type: str, data: dict[str, Any]
) -> None:
    template = TEMPLATES[event_type]
    with pytest.raises(ValueError, match="lacks"):
        template.render(notice(event_type, **data))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"amount": 3998, "currency": "EUR"}, "39.98 EUR"),
        ({"amount": 5, "currency": "EUR"}, "0.05 EUR"),
        ({"amount": 1200, "currency": "JPY"}, "1200 JPY"),
        ({"amount": 1500, "currency": "KWD"}, "1.500 KWD"),
        ({"amount": -250, "currency": "USD"}, "-2.50 USD"),
    ],
)
def test_money_reads_as_the_currency_writes_it(value: dict[str, Any], text: str) -> None:
    assert money(value) == text


# -- the SES adapter ------------------------------------------------------------------------------


@pytest.fixture
def ses() -> Any:
    return boto3.client("sesv2", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def test_the_adapter_sends_plain_text_from_the_sender_to_the_one_address(ses: Any) -> None:
    expected = {
        "FromEmailAddress": "orders@shop.example",
        "Destination": {"ToAddresses": ["ada@example.com"]},
        "Content": {
            "Simple": {
                "Subject": {"Data": "Hi", "Charset": "UTF-8"},
                "Body": {"Text": {"Data": "Body", "Charset": "UTF-8"}},
            }
        },
        "EmailTags": [{"Name": "event_id", "Value": "01M8138JMSGYCV9FKFGGZVSFG2"}],
    }
    with Stubber(ses) as stub:
        stub.add_response("send_email", {"MessageId": "m-1"}, expected)
        assert (
            SesSender(ses, "orders@shop.example").send("ada@example.com", "Hi", "Body", "01M8138JMSGYCV9FKFGGZVSFG2")
            == "m-1"
        )
        stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("code", "status", "raised"),
    [
        ("TooManyRequestsException", 429, EmailUnavailable),
        ("SendingPausedException", 400, EmailUnavailable),
        ("MailFromDomainNotVerifiedException", 400, EmailUnavailable),
        ("InternalFailure", 500, EmailUnavailable),
        ("MessageRejected", 400, EmailRejected),
        ("BadRequestException", 400, EmailRejected),
    ],
)
def test_the_adapter_tells_a_send_to_retry_from_one_never_to_retry(
    ses: Any, code: str, status: int, raised: type[Exception]
) -> None:
    sender = SesSender(ses, "orders@shop.example")
    with Stubber(ses) as stub:
        stub.add_client_error("send_email", service_error_code=code, http_status_code=status)
        with pytest.raises(raised, match=code):
            sender.send("ada@example.com", "Hi", "Body", "E1")
