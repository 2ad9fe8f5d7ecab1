"""PaymentQueue, its dead-letter queue and the payment worker, and the commerce consumer feeding them, as
template.yaml declares them."""

import json
import typing
from typing import Any

from local import cfn
from shopfeed.commerce import items
from shopfeed.commerce.payments.worker import BACKOFF
from shopfeed.commerce.settings import PaymentWorkerSettings

TEMPLATE = cfn.load()
RESOURCES = TEMPLATE["Resources"]


def props(name: str) -> dict[str, Any]:
    return dict(RESOURCES[name]["Properties"])


def test_the_payment_queue_hands_a_message_to_its_dead_letter_queue_after_five_receives() -> None:
    queue = props("PaymentQueue")
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": ["PaymentDLQ", "Arn"]},
        "maxReceiveCount": 5,
    }
    # Lambda asks for at least six times the function's timeout, so a message is never handed to a
    # second worker while the first may still be waiting for the provider.
    assert queue["VisibilityTimeout"] >= 6 * props("PaymentWorkerFunction")["Timeout"]
    assert props("PaymentDLQ")["MessageRetentionPeriod"] > queue["MessageRetentionPeriod"]
    for name in ("PaymentQueue", "PaymentDLQ"):
        assert props(name)["SqsManagedSseEnabled"] is True, name


def test_the_payment_worker_reports_each_failed_message_on_its_own_and_caps_provider_calls() -> None:
    (event,) = props("PaymentWorkerFunction")["Events"].values()
    assert event["Type"] == "SQS"
    assert event["Properties"]["Queue"] == {"Fn::GetAtt": ["PaymentQueue", "Arn"]}
    assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert event["Properties"]["ScalingConfig"]["MaximumConcurrency"] >= 2  # Lambda's minimum


def test_the_payment_worker_touches_only_the_commerce_table_and_its_queue_with_the_calls_it_makes() -> None:
    table, queue = props("PaymentWorkerFunction")["Policies"][0]["Statement"]
    assert table["Resource"] == {"Fn::GetAtt": ["CommerceTable", "Arn"]}
    assert sorted(table["Action"]) == [
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
    ]
    # holding a failed message back (commerce.payments.worker.BACKOFF), on the queue it reads
    assert (queue["Action"], queue["Resource"]) == (
        "sqs:ChangeMessageVisibility",
        {"Fn::GetAtt": ["PaymentQueue", "Arn"]},
    )
    variables = props("PaymentWorkerFunction")["Environment"]["Variables"]
    assert variables["PAYMENT_QUEUE_URL"] == {"Ref": "PaymentQueue"}


def test_the_payment_worker_backoff_waits_out_a_provider_outage_longer_than_the_visibility_timeout() -> None:
    receives = props("PaymentQueue")["RedrivePolicy"]["maxReceiveCount"]
    assert BACKOFF.outlasts(receives - 1) > props("PaymentQueue")["VisibilityTimeout"]
    # the worker's first wait is the template's parameter, whose default is the worker's own
    assert TEMPLATE["Parameters"]["PaymentRetrySeconds"]["Default"] == BACKOFF.base
    variables = props("PaymentWorkerFunction")["Environment"]["Variables"]
    assert variables["PAYMENT_RETRY_SECONDS"] == {"Ref": "PaymentRetrySeconds"}


def test_the_provider_parameter_names_exactly_the_providers_the_worker_knows() -> None:
    variables = props("PaymentWorkerFunction")["Environment"]["Variables"]
    assert variables["PAYMENT_PROVIDER"] == {"Ref": "PaymentProvider"}
    known = typing.get_args(PaymentWorkerSettings.model_fields["payment_provider"].annotation)
    assert TEMPLATE["Parameters"]["PaymentProvider"]["AllowedValues"] == list(known)


def test_the_commerce_consumer_lets_new_attempts_in_and_may_queue_them() -> None:
    consumer = props("CommerceStreamFunction")
    (event,) = consumer["Events"].values()
    patterns = [json.loads(f["Pattern"]) for f in event["Properties"]["FilterCriteria"]["Filters"]]
    assert {
        "eventName": ["INSERT"],
        "dynamodb": {"NewImage": {"entity_type": {"S": [items.PAYMENT_ATTEMPT]}}},
    } in patterns
    # and refunds: an attempt whose refund became Pending (commerce.payments.worker.payment_task)
    assert {
        "eventName": ["MODIFY"],
        "dynamodb": {
            "NewImage": {"entity_type": {"S": [items.PAYMENT_ATTEMPT]}, "refund": {"M": {"status": {"S": ["Pending"]}}}}
        },
    } in patterns
    assert consumer["Environment"]["Variables"]["PAYMENT_QUEUE_URL"] == {"Ref": "PaymentQueue"}
    sends = [s for s in consumer["Policies"][0]["Statement"] if s["Action"] == "sqs:SendMessage"]
    assert {"Fn::GetAtt": ["PaymentQueue", "Arn"]} in sends[0]["Resource"]


def test_payment_alarms_watch_the_dead_letter_queue_and_the_age_of_the_oldest_payment() -> None:
    assert props("PaymentDLQDepthAlarm")["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": ["PaymentDLQ", "QueueName"]}}
    ]
    age = props("PaymentQueueAgeAlarm")
    assert age["MetricName"] == "ApproximateAgeOfOldestMessage"
    assert age["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["PaymentQueue", "QueueName"]}}]
