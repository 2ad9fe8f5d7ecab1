"""The payment chain as the template declares it, for the moto and DynamoDB Local tiers.

``PaymentLine`` is PaymentQueue (with PaymentDLQ and its redrive policy, from template.yaml) and the
payment worker behind the local stack's SQS poller, which follows the template's event source mapping
(batch size, partial batch responses) and deletes what succeeded, as Lambda does. ``PaymentChain``
adds CommerceTable's stream, filtered by the commerce consumer's FilterCriteria and handed to it as
Lambda would: a payment started through the API is queued, settled, and its event relayed.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from local import cfn
from local.filtering import filter_patterns, passes
from local.harness.queues import WorkerQueue
from shopfeed.commerce import items, keys
from shopfeed.commerce.payments.services import PaymentTask, RefundTask
from shopfeed.commerce.payments.worker import BACKOFF
from shopfeed.platform import clients, dynamo, streams
from tests.integration.outbox_support import STREAM_FUNCTION, CommerceStream, batch

if TYPE_CHECKING:
    from tests.support.queue_time import QueueTime

WORKER = "PaymentWorkerFunction"
CONSUMER = "CommerceStreamFunction"


class PaymentLine(WorkerQueue):
    """PaymentQueue, PaymentDLQ and the worker reading the queue (redrive after the template's 5 receives)."""

    @classmethod
    def create(cls) -> "PaymentLine":
        return cls.of("PaymentQueue", "PaymentDLQ", WORKER)


def task_body(order_id: str, attempt_id: str) -> str:
    return PaymentTask(order_id=order_id, attempt_id=attempt_id).model_dump_json()


def refund_body(order_id: str, attempt_id: str, refund_id: str) -> str:
    return RefundTask(order_id=order_id, attempt_id=attempt_id, refund_id=refund_id).model_dump_json()


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


def sandbox_calls(
    attempt_id: str, table: str = "CommerceTable", ledger: Callable[[str], keys.Key] | None = None
) -> int:
    """How many times the sandbox provider was called with this idempotency key (0: never): an
    attempt's charge, or with ``ledger=keys.sandbox_refund`` a refund."""
    key = (ledger or keys.sandbox_charge)(attempt_id)
    response = clients.dynamodb().get_item(TableName=table, Key=dynamo.serialize(key), ConsistentRead=True)
    return int(dynamo.deserialize(response["Item"])["calls"]) if "Item" in response else 0


def outage(
    chain: PaymentChain, queue_time: "QueueTime", key: str, ledger: Callable[[str], keys.Key] | None = None
) -> list[int]:
    """Run the chain through a provider outage on moto's queue clock: after each round, the sandbox's
    calls for ``key`` so far, then the clock moved past that receive's backoff (and no sooner: a
    message held back is not delivered before its time). Until the message is parked."""
    calls: list[int] = []
    for receive in range(1, 10):
        chain.run()
        calls.append(sandbox_calls(key, ledger=ledger))
        parked = clients.sqs().get_queue_attributes(
            QueueUrl=chain.line.dlq_url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]["ApproximateNumberOfMessages"]
        if parked != "0":
            return calls
        queue_time.advance(BACKOFF.delay(receive) - 1)
        chain.run()
        assert sandbox_calls(key, ledger=ledger) == calls[-1], "a message came back before its backoff"
        queue_time.advance(1)
    raise AssertionError(f"{key} was never parked")
