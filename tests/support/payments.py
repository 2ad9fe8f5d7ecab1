"""The payment chain as the template declares it, for the moto and DynamoDB Local tiers.

``PaymentLine`` is PaymentQueue (with PaymentDLQ and its redrive policy, from template.yaml) and the
payment worker behind the local stack's SQS poller, which follows the template's event source mapping
(batch size, partial batch responses) and deletes what succeeded, as Lambda does. ``PaymentChain``
adds CommerceTable's stream, filtered by the commerce consumer's FilterCriteria and handed to it as
Lambda would: a payment started through the API is queued, settled, and its event relayed.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from local import cfn
from local.filtering import filter_patterns, passes
from local.lambdas import LocalFunction
from local.queues import QueuePoller, QueueSettings
from shopfeed.commerce import items, keys
from shopfeed.commerce.payments import PaymentTask
from shopfeed.platform import clients, dynamo, streams
from tests.integration.outbox_support import STREAM_FUNCTION, CommerceStream, batch
from tests.support.fanout import queue_arn, queue_attributes

WORKER = "PaymentWorkerFunction"
CONSUMER = "CommerceStreamFunction"


@dataclass
class PaymentLine:
    """PaymentQueue, PaymentDLQ and the worker reading the queue."""

    url: str
    arn: str
    dlq_url: str
    delivered: list[str] = field(default_factory=list)  # every body the worker was handed, in order

    @classmethod
    def create(cls) -> "PaymentLine":
        """The template's queues in whatever SQS the shared client points at. The visibility timeout is
        zero here, so a failed message comes back at once instead of after the template's 180 s; the
        redrive policy (5 receives) is the template's."""
        resolver = cfn.Resolver(cfn.load())
        sqs = clients.sqs()
        dlq_attributes = queue_attributes(resolver, "PaymentDLQ")
        dlq_url = sqs.create_queue(QueueName="PaymentDLQ", Attributes=dlq_attributes)["QueueUrl"]
        resolver.attributes[("PaymentDLQ", "Arn")] = queue_arn(dlq_url)
        attributes = queue_attributes(resolver, "PaymentQueue") | {"VisibilityTimeout": "0"}
        url = sqs.create_queue(QueueName="PaymentQueue", Attributes=attributes)["QueueUrl"]
        return cls(url=url, arn=queue_arn(url), dlq_url=dlq_url)

    def poller(self) -> QueuePoller:
        from functions.payment_worker.app import lambda_handler

        (event,) = cfn.function_properties(WORKER)["Events"].values()
        function = LocalFunction(WORKER, self._recording(lambda_handler), timeout_s=30)
        settings = QueueSettings.from_event(event["Properties"])
        return QueuePoller(
            function=function, queue_url=self.url, queue_arn=self.arn, settings=settings, sqs=clients.sqs()
        )

    def _recording(self, handler: Any) -> Any:
        def record(event: dict[str, Any], context: Any) -> Any:
            self.delivered += [r["body"] for r in event["Records"]]
            return handler(event, context)

        return record

    def drain(self, rounds: int = 100) -> int:
        """Deliver until the queue is empty (failed messages come back at once, until their redrive);
        returns the number of batches. Bounded: a queue that never empties fails the test."""
        poller = self.poller()
        for batches in range(rounds):
            if not poller.poll():
                return batches
        raise AssertionError(f"the payment queue was not empty after {rounds} batches")

    def send(self, bodies: Sequence[str]) -> None:
        for body in bodies:
            clients.sqs().send_message(QueueUrl=self.url, MessageBody=body)

    def waiting(self) -> list[str]:
        """The bodies on the queue, received (and hidden for a minute): tests that read what was queued."""
        sqs = clients.sqs()
        received: list[Any] = []
        while page := sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10, VisibilityTimeout=60).get(
            "Messages"
        ):
            received += page
        return [m["Body"] for m in received]

    def dead_letters(self) -> list[str]:
        messages = clients.sqs().receive_message(QueueUrl=self.dlq_url, MaxNumberOfMessages=10).get("Messages", [])
        return [m["Body"] for m in messages]


def task_body(order_id: str, attempt_id: str) -> str:
    return PaymentTask(order_id=order_id, attempt_id=attempt_id).model_dump_json()


def consumer_filters() -> Callable[[dict[str, Any]], bool]:
    """Whether the commerce consumer's event source mapping lets a stream record in."""
    (event,) = cfn.function_properties(CONSUMER)["Events"].values()
    patterns = filter_patterns(event["Properties"]["FilterCriteria"])
    return lambda record: passes(patterns, record)


@dataclass
class PaymentChain:
    """CommerceTable's stream → the commerce consumer → PaymentQueue → the worker, in rounds."""

    stream: CommerceStream
    line: PaymentLine
    consumed: list[dict[str, Any]] = field(default_factory=list)  # every record handed to the consumer

    def run(self, rounds: int = 10) -> None:
        """Until the stream has nothing new for the consumer and the queue is empty."""
        from functions.commerce_stream.app import lambda_handler

        wanted = consumer_filters()
        for _ in range(rounds):
            records = [record for record in self.stream.read() if wanted(record)]
            if records:
                self.consumed += records
                response = lambda_handler(batch(records), STREAM_FUNCTION)
                assert response["batchItemFailures"] == [], response
            if not self.line.drain() and not records:
                return
        raise AssertionError(f"the payment chain was still busy after {rounds} rounds")

    def attempt_records(self) -> list[dict[str, Any]]:
        """The attempt INSERT records the consumer was handed."""
        return [r for r in self.consumed if _entity_type(r) == items.PAYMENT_ATTEMPT]


def _entity_type(record: dict[str, Any]) -> str | None:
    return streams.parse(DynamoDBRecord(record)).entity_type


def sandbox_calls(attempt_id: str, table: str = "CommerceTable") -> int:
    """How many times the sandbox provider was called with this attempt's idempotency key (0: never)."""
    response = clients.dynamodb().get_item(
        TableName=table, Key=dynamo.serialize(keys.sandbox_charge(attempt_id)), ConsistentRead=True
    )
    return int(dynamo.deserialize(response["Item"])["calls"]) if "Item" in response else 0
