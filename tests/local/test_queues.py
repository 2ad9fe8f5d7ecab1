"""SQS pollers: batches, partial batch responses and filters, as Lambda's SQS event source does them."""

import json
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.parser.models import SqsModel

from local.filtering import filter_patterns
from local.lambdas import LocalFunction
from local.queues import QueuePoller, QueueSettings, peek
from tests.support.queue_time import QueueTime, queue_time

__all__ = ["queue_time"]

HOLD_S = 30


class Jobs:
    """A queue with a dead-letter queue after two receives, and a consumer of its messages."""

    def __init__(self) -> None:
        self.sqs = boto3.client("sqs")
        dlq = self.sqs.create_queue(QueueName="JobsDLQ")["QueueUrl"]
        self.dlq_arn = self.sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        self.dlq_url = dlq
        redrive = json.dumps({"deadLetterTargetArn": self.dlq_arn, "maxReceiveCount": 2})
        # A zero visibility timeout makes a failed message visible again at once, so a test needs no wait.
        self.url = self.sqs.create_queue(
            QueueName="Jobs", Attributes={"VisibilityTimeout": "0", "RedrivePolicy": redrive}
        )["QueueUrl"]
        self.arn = self.sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        self.batches: list[list[str]] = []
        self.events: list[dict[str, Any]] = []

    def send(self, *bodies: str) -> None:
        for body in bodies:
            self.sqs.send_message(QueueUrl=self.url, MessageBody=body)

    def consume(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        """Fails the messages whose body says "fail", and those saying "hold" after asking SQS to hold
        them back for 30 s (a function's own backoff); raises on "raise"."""
        self.events.append(event)
        self.batches.append([r["body"] for r in event["Records"]])
        if any(r["body"] == "raise" for r in event["Records"]):
            raise RuntimeError("poison message")
        for record in event["Records"]:
            if record["body"] == "hold":
                self.sqs.change_message_visibility(
                    QueueUrl=self.url, ReceiptHandle=record["receiptHandle"], VisibilityTimeout=HOLD_S
                )
        failed = [r for r in event["Records"] if r["body"] in ("fail", "hold")]
        return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in failed]}

    def poller(self, settings: QueueSettings) -> QueuePoller:
        function = LocalFunction("JobsConsumer", self.consume)
        return QueuePoller(function=function, queue_url=self.url, queue_arn=self.arn, settings=settings, sqs=self.sqs)

    def depth(self, url: str) -> int:
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


@pytest.fixture
def jobs(aws: None) -> Jobs:
    return Jobs()


def test_messages_reach_the_consumer_as_lambda_shapes_them_and_are_deleted(jobs: Jobs) -> None:
    # given two messages
    jobs.send("one", "two")

    # when the poller runs
    jobs.poller(QueueSettings(batch_size=10)).poll()

    # then one event carries both, valid for Powertools' model of Lambda's SQS event, and the queue is empty
    (event,) = jobs.events
    SqsModel.model_validate(event)
    assert sorted(jobs.batches[0]) == ["one", "two"]
    record = event["Records"][0]
    assert record["eventSource"] == "aws:sqs"
    assert record["eventSourceARN"] == jobs.arn
    assert record["attributes"]["ApproximateReceiveCount"] == "1"
    assert jobs.depth(jobs.url) == 0


def test_only_reported_failures_stay_on_the_queue(jobs: Jobs) -> None:
    # given one good and one failing message, with ReportBatchItemFailures
    jobs.send("ok", "fail")
    poller = jobs.poller(QueueSettings(report_batch_item_failures=True))

    # when the poller runs once
    poller.poll()

    # then only the failed message is left for redelivery
    assert jobs.depth(jobs.url) == 1
    poller.poll()
    assert jobs.batches[-1] == ["fail"]


def test_a_failed_message_comes_back_after_the_visibility_its_function_gave_it(
    jobs: Jobs, queue_time: QueueTime
) -> None:
    # given a message its function fails after asking SQS to hold it back (the queue's own timeout is 0)
    jobs.send("hold")
    poller = jobs.poller(QueueSettings(report_batch_item_failures=True))
    poller.poll()

    # when the poller runs again before that time has passed, then after
    queue_time.advance(HOLD_S - 1)
    early = poller.poll()
    queue_time.advance(2)
    late = poller.poll()

    # then the poller left the function's visibility alone, and the next delivery counts its receives
    assert (early, late) == (0, 1)
    assert [event["Records"][0]["attributes"]["ApproximateReceiveCount"] for event in jobs.events] == ["1", "2"]


def test_a_function_error_leaves_every_message_until_the_redrive_policy_moves_them(jobs: Jobs) -> None:
    # given a poison message next to a good one
    jobs.send("raise", "ok")
    poller = jobs.poller(QueueSettings(report_batch_item_failures=True))

    # when the poller runs until the queue is empty (each message may be received twice)
    for _ in range(5):
        poller.poll()

    # then both went to the dead-letter queue after their receives: a function error fails the batch
    assert jobs.depth(jobs.url) == 0
    assert jobs.depth(jobs.dlq_url) == 2


def test_filtered_out_messages_are_deleted_without_invoking(jobs: Jobs) -> None:
    # given a filter on the JSON body
    jobs.send(json.dumps({"kind": "wanted"}), json.dumps({"kind": "other"}), "not json")
    criteria = {"Filters": [{"Pattern": '{"body": {"kind": ["wanted"]}}'}]}

    # when the poller runs
    jobs.poller(QueueSettings(filters=filter_patterns(criteria))).poll()

    # then only the wanted message was delivered, and none is left
    assert jobs.batches == [[json.dumps({"kind": "wanted"})]]
    assert jobs.depth(jobs.url) == 0


def test_a_peek_shows_every_message_of_the_queue_and_leaves_them_there(aws: None) -> None:
    # given a queue holding more messages than one receive returns
    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName="OrderEvents")["QueueUrl"]
    bodies = [f"event-{n:02d}" for n in range(25)]
    for body in bodies:
        sqs.send_message(QueueUrl=url, MessageBody=body)

    # when it is peeked at twice
    first, second = peek(sqs, url), peek(sqs, url)

    # then each peek shows all of them, and they stay on the queue for their subscriber
    assert sorted(m["Body"] for m in first) == bodies
    assert sorted(m["Body"] for m in second) == bodies
