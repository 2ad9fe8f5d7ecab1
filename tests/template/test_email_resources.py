"""The customer email chain as template.yaml declares it: EmailRule → EmailQueue (with EmailDLQ) → the
order email worker, its alarms and its grants (SES only as the configured identity)."""

import json
from typing import Any

from local import cfn
from shopfeed.commerce import events
from shopfeed.commerce.emails.notices import TEMPLATES
from shopfeed.commerce.emails.worker import BACKOFF
from shopfeed.commerce.settings import OrderEmailSettings

TEMPLATE = cfn.load()
RESOURCES = TEMPLATE["Resources"]


def props(name: str) -> dict[str, Any]:
    return dict(RESOURCES[name]["Properties"])


def test_the_rule_sends_the_queue_exactly_the_commerce_events_a_customer_has_a_template_for() -> None:
    rule = props("EmailRule")
    assert rule["EventBusName"] == {"Ref": "EventBus"}
    assert rule["EventPattern"]["source"] == [events.SOURCE]
    assert sorted(rule["EventPattern"]["detail-type"]) == sorted(TEMPLATES)
    assert rule["Targets"] == [{"Id": "EmailQueue", "Arn": {"Fn::GetAtt": ["EmailQueue", "Arn"]}}]
    # and only that rule may send to the queue
    (statement,) = props("EmailQueuePolicy")["PolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert statement["Resource"] == {"Fn::GetAtt": ["EmailQueue", "Arn"]}
    assert statement["Condition"] == {"ArnEquals": {"aws:SourceArn": {"Fn::GetAtt": ["EmailRule", "Arn"]}}}


def test_an_email_outlives_an_hour_of_ses_failing_before_its_dead_letter_queue() -> None:
    queue = props("EmailQueue")
    receives = queue["RedrivePolicy"]["maxReceiveCount"]
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {"Fn::GetAtt": ["EmailDLQ", "Arn"]}
    assert BACKOFF.outlasts(receives) >= 3600
    # the backoff is the worker's; the queue's own timeout only covers a worker that dies mid-batch
    assert queue["VisibilityTimeout"] >= 6 * props("OrderEmailFunction")["Timeout"]
    assert props("EmailDLQ")["MessageRetentionPeriod"] > queue["MessageRetentionPeriod"]
    for name in ("EmailQueue", "EmailDLQ"):
        assert props(name)["SqsManagedSseEnabled"] is True, name


def test_a_claim_on_an_email_outlasts_the_worker_that_holds_it() -> None:
    # a live claim is never taken over: its lease is longer than the worker may run
    lease = OrderEmailSettings.model_fields["email_claim_seconds"].default
    assert lease > props("OrderEmailFunction")["Timeout"]


def test_the_worker_reads_the_queue_reporting_each_failed_message_on_its_own() -> None:
    worker = props("OrderEmailFunction")
    (event,) = worker["Events"].values()
    assert event["Type"] == "SQS"
    assert event["Properties"]["Queue"] == {"Fn::GetAtt": ["EmailQueue", "Arn"]}
    assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert event["Properties"]["ScalingConfig"]["MaximumConcurrency"] == 2  # Lambda's minimum; SES's rate
    variables = worker["Environment"]["Variables"]
    assert variables == {
        "CALL_BUDGET": "background",
        "COMMERCE_TABLE_NAME": {"Ref": "CommerceTable"},
        "EMAIL_QUEUE_URL": {"Ref": "EmailQueue"},
        "EMAIL_SENDER": {"Ref": "EmailSender"},
    }
    assert set(OrderEmailSettings.model_fields) - {"email_claim_seconds"} == {
        name.lower() for name in variables if name != "CALL_BUDGET"
    }


def test_the_worker_may_send_only_as_the_configured_identity_and_from_the_configured_address() -> None:
    statements = props("OrderEmailFunction")["Policies"][0]["Statement"]
    (ses,) = [s for s in statements if "ses" in json.dumps(s["Action"])]
    assert ses["Action"] == "ses:SendEmail"
    template, names = ses["Resource"]["Fn::Sub"]
    assert template == "arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:identity/${Identity}"
    assert names == {
        "Identity": {"Fn::If": ["EmailIdentityIsSender", {"Ref": "EmailSender"}, {"Ref": "EmailIdentity"}]}
    }
    assert ses["Condition"] == {"StringEquals": {"ses:FromAddress": {"Ref": "EmailSender"}}}
    # resolved with the defaults, the identity is the sender address itself
    resolver = cfn.Resolver(TEMPLATE)
    resolved = resolver.resolve(ses["Resource"])
    assert resolved.endswith(":identity/orders@example.com")


def test_the_worker_touches_the_table_and_its_queue_with_only_the_calls_it_makes() -> None:
    statements = props("OrderEmailFunction")["Policies"][0]["Statement"]
    table = [s for s in statements if s["Resource"] == {"Fn::GetAtt": ["CommerceTable", "Arn"]}]
    assert [sorted(s["Action"]) for s in table] == [["dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:UpdateItem"]]
    queue = [s for s in statements if s["Resource"] == {"Fn::GetAtt": ["EmailQueue", "Arn"]}]
    assert [s["Action"] for s in queue] == ["sqs:ChangeMessageVisibility"]
    assert len(statements) == 3


def test_email_alarms_watch_the_dead_letter_queue_the_oldest_email_and_the_worker() -> None:
    dlq = props("EmailDLQDepthAlarm")
    assert (dlq["MetricName"], dlq["Threshold"], dlq["ComparisonOperator"]) == (
        "ApproximateNumberOfMessagesVisible",
        0,
        "GreaterThanThreshold",
    )
    assert dlq["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["EmailDLQ", "QueueName"]}}]
    age = props("EmailQueueAgeAlarm")
    assert age["MetricName"] == "ApproximateAgeOfOldestMessage"
    assert age["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["EmailQueue", "QueueName"]}}]
    for alarm in ("OrderEmailFunctionErrorsAlarm", "OrderEmailFunctionThrottlesAlarm"):
        assert props(alarm)["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": "OrderEmailFunction"}}]
    for alarm in ("EmailDLQDepthAlarm", "EmailQueueAgeAlarm"):
        assert props(alarm)["AlarmActions"] == [
            {"Fn::If": ["HasAlarmTopic", {"Ref": "AlarmTopicArn"}, {"Ref": "AlarmTopic"}]}
        ]
