"""The customer email chain as the template declares it, for the moto tier: the bus with the template's
EmailRule into EmailQueue (with EmailDLQ and its redrive policy), the order email worker behind the local
stack's SQS poller, SES as moto's (the sender verified), and the five events a customer hears about,
built as the outbox publishes them."""

import json
from dataclasses import dataclass
from typing import Any

import boto3
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends

from local.cfn import Resolver, load, resources
from local.harness.builders import NOW, customer, euros, order
from local.harness.queues import WorkerQueue
from shopfeed.commerce import events, items
from shopfeed.commerce.emails.notices import ORDER_EXPIRED, PAYMENT_REFUNDED
from shopfeed.commerce.models import PaymentAttempt, PaymentStatus
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import iso, new_id
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.publisher import EventBridgePublisher

WORKER = "OrderEmailFunction"
SENDER = "orders@shop.example"
REGION = "us-east-1"


@dataclass(frozen=True)
class SentEmail:
    to: list[str]
    sender: str
    subject: str
    body: str


class EmailLine(WorkerQueue):
    """EmailQueue, EmailDLQ and the worker reading the queue; the bus and its EmailRule in front."""

    bus_name: str = ""

    @classmethod
    def create(cls) -> "EmailLine":
        line = cls.of("EmailQueue", "EmailDLQ", WORKER)
        resolver = Resolver(load())
        bus = resolver.resolve(resources("AWS::Events::EventBus")["EventBus"]["Properties"])["Name"]
        resolver.refs["EventBus"] = bus
        resolver.attributes[("EmailQueue", "Arn")] = line.arn
        rule = resolver.resolve(resources("AWS::Events::Rule")["EmailRule"]["Properties"])
        bridge = clients.eventbridge()
        bridge.create_event_bus(Name=bus)
        bridge.put_rule(Name="EmailRule", EventBusName=bus, EventPattern=json.dumps(rule["EventPattern"]))
        bridge.put_targets(Rule="EmailRule", EventBusName=bus, Targets=rule["Targets"])
        boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress=SENDER)
        line.bus_name = bus
        return line

    def publish(self, *outbox_events: OutboxEvent) -> None:
        """Put the events on the bus as the outbox relay does (the same id each time one is put again)."""
        report = EventBridgePublisher(clients.eventbridge(), self.bus_name).publish(outbox_events)
        assert not report.failures, report.failures


def sent_emails() -> list[SentEmail]:
    """What SES (moto) sent, oldest first."""
    backend = ses_backends[DEFAULT_ACCOUNT_ID][REGION]
    return [
        SentEmail(to=m.destinations["ToAddresses"], sender=m.source, subject=m.subject, body=m.body)
        for m in backend.sent_messages
    ]


def put_customer(user_id: str = "U100", email: str | None = None, name: str = "Ada Lovelace") -> None:
    item = items.customer_item(customer(user_id, email, name))
    clients.dynamodb().put_item(TableName="CommerceTable", Item=dynamo.serialize(item))


def put_item(item: dict[str, Any]) -> None:
    clients.dynamodb().put_item(TableName="CommerceTable", Item=dynamo.serialize(item))


# -- the events, as their producers write them to the outbox --------------------------------------


def placed(user_id: str = "U100") -> OutboxEvent:
    return events.order_placed(order([("P-RED-TSHIRT", 2, euros(1999))], user_id=user_id))


def paid(user_id: str = "U100") -> OutboxEvent:
    at = iso(NOW)
    attempt = PaymentAttempt(
        attempt_id=new_id(),
        order_id=new_id(),
        user_id=user_id,
        status=PaymentStatus.AUTHORIZED,
        amount=euros(3998),
        created_at=at,
        updated_at=at,
        provider_reference="sandbox-1",
    )
    return events.payment_settled(attempt)


def status_changed(status: str, user_id: str = "U100") -> OutboxEvent:
    """An OrderStatusChanged of events.order_status_changed's shape."""
    order_id = new_id()
    return _event(
        events.ORDER_STATUS_CHANGED,
        order_id,
        {
            "order_id": order_id,
            "user_id": user_id,
            "previous_status": "Paid",
            "status": status,
            "changed_at": iso(NOW),
            "shipment_id": new_id(),
        },
    )


def refunded(user_id: str = "U100") -> OutboxEvent:
    """A PaymentRefunded as the refunds work describes it: order_id, user_id, amount."""
    order_id = new_id()
    return _event(
        PAYMENT_REFUNDED, order_id, {"order_id": order_id, "user_id": user_id, "amount": euros(1999).model_dump()}
    )


def expired(user_id: str = "U100") -> OutboxEvent:
    """An OrderExpired as the payment window work describes it: order_id, user_id."""
    order_id = new_id()
    return _event(ORDER_EXPIRED, order_id, {"order_id": order_id, "user_id": user_id})


def _event(event_type: str, order_id: str, detail: dict[str, Any]) -> OutboxEvent:
    return OutboxEvent(
        event_id=new_id(),
        event_type=event_type,
        source=events.SOURCE,
        aggregate_id=order_id,
        occurred_at=iso(NOW),
        detail=detail,
    )
