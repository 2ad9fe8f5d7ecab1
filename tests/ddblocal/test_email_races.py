"""Deliveries of one event racing, one container (process) per invocation, on DynamoDB Local: the
order email worker's claim lets exactly one of them send. SES and SQS are a moto server's (the
worker's failed messages are held back on a real queue)."""

import copy
import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from local.harness.builders import customer
from local.harness.client import LambdaContext
from local.harness.race import Invoke, all_at_once
from shopfeed.commerce import items, keys
from shopfeed.platform import clients, dynamo
from tests.conftest import reset_caches
from tests.ddblocal.conftest import StoredItems

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

SAMPLE = Path(__file__).resolve().parents[2] / "events" / "sqs" / "order_email_event.json"
SENDER = "orders@shop.example"
DELIVERIES = 10


@pytest.fixture
def email_aws(sqs_endpoint: str, tables: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """EmailQueue and SES (the sender verified) on the module's moto server; the sample event's customer."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", sqs_endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SESV2", sqs_endpoint)
    monkeypatch.setenv("EMAIL_SENDER", SENDER)
    reset_caches()
    monkeypatch.setenv("EMAIL_QUEUE_URL", clients.sqs().create_queue(QueueName="EmailQueue")["QueueUrl"])
    ses = boto3.client("ses", endpoint_url=sqs_endpoint)
    ses.verify_email_identity(EmailAddress=SENDER)
    item = items.customer_item(customer("U100", "ada@example.com"))
    clients.dynamodb().put_item(TableName=tables["CommerceTable"], Item=dynamo.serialize(item))
    return ses


def sent(ses: Any) -> int:
    return int(ses.get_send_quota()["SentLast24Hours"])


def deliveries(count: int) -> list[dict[str, Any]]:
    """The sample message, delivered ``count`` times (SQS gives each delivery its own message id)."""
    (record,) = json.loads(SAMPLE.read_text())["Records"]
    return [{"Records": [copy.deepcopy(record) | {"messageId": f"delivery-{n}"}]} for n in range(count)]


def test_ten_deliveries_of_one_event_at_once_send_exactly_one_email(email_aws: Any, stored: StoredItems) -> None:
    # given one event delivered ten times, each delivery in its own container, all at once
    before = sent(email_aws)
    events = deliveries(DELIVERIES)
    # when
    answers = [a.json for a in all_at_once([Invoke("OrderEmailFunction", event) for event in events])]
    # then one email went out
    assert sent(email_aws) - before == 1
    # and every other delivery either found it sent, or found it being sent and was held back to retry
    held = [a for a in answers if a["batchItemFailures"]]
    assert all(a["batchItemFailures"][0]["itemIdentifier"].startswith("delivery-") for a in held)
    guard = stored.get(keys.email_notice("01M8138JMSGYCV9FKFGGZVSFG2"))
    assert (guard["status"], guard["claims"]) == ("Sent", 1)
    # when the held-back deliveries come again
    from functions.order_emails.app import lambda_handler

    for answer in held:
        message_id = answer["batchItemFailures"][0]["itemIdentifier"]
        (again,) = [event for event in events if event["Records"][0]["messageId"] == message_id]
        result = lambda_handler(again, LambdaContext(function_name="OrderEmailFunction"))
        # then each is acknowledged and still nothing more is sent
        assert result == {"batchItemFailures": []}
    assert sent(email_aws) - before == 1
