"""The outbox relay's surroundings in moto: the template's event bus and subscriber queue, CommerceTable's
stream read as Lambda delivers it, and EventBridge failing on demand."""

import copy
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import boto3
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from botocore.awsrequest import AWSResponse
from botocore.config import Config

from local.cfn import Resolver, load, resources
from local.harness.builders import euros, order
from local.harness.client import ApiClient, LambdaContext
from local.harness.factories import line, placed_order
from local.harness.tables import table_items
from local.streams import lambda_record, records_as_sent
from shopfeed.commerce import events, items
from shopfeed.platform import clients, dynamo, streams
from shopfeed.platform.outbox import OutboxEvent

STREAM_FUNCTION = LambdaContext(
    function_name="CommerceStreamFunction",
    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:CommerceStreamFunction",
)
SWEEPER_FUNCTION = LambdaContext(
    function_name="OutboxSweeperFunction",
    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:OutboxSweeperFunction",
)


# -- the bus and its example subscriber, from template.yaml ---------------------------------------


@dataclass
class Subscriber:
    """The queue behind the template's OrderEventsRule: what another team would receive."""

    queue_url: str
    bus_name: str

    def receive(self, rounds: int = 20) -> list[dict[str, Any]]:
        """Every event waiting in the queue (deleted as read). Bounded: stops at the first empty
        receive, or after ``rounds`` receives of ten."""
        sqs = boto3.client("sqs")
        received: list[dict[str, Any]] = []
        for _ in range(rounds):
            messages = sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not messages:
                break
            for message in messages:
                received.append(json.loads(message["Body"]))
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return received


def create_event_bus_with_subscriber() -> Subscriber:
    """The template's EventBus and OrderEventsRule → OrderEventsQueue, created in moto as the template
    declares them (name, event pattern), so the test subscriber cannot drift from the deployed one."""
    resolver = Resolver(load())
    bus = resolver.resolve(resources("AWS::Events::EventBus")["EventBus"]["Properties"])["Name"]
    sqs = boto3.client("sqs")
    queue_url = sqs.create_queue(QueueName="OrderEventsQueue")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    resolver.refs["EventBus"] = bus
    resolver.attributes[("OrderEventsQueue", "Arn")] = queue_arn
    rule = resolver.resolve(resources("AWS::Events::Rule")["OrderEventsRule"]["Properties"])
    events = clients.eventbridge()
    events.create_event_bus(Name=bus)
    events.put_rule(Name="OrderEventsRule", EventBusName=bus, EventPattern=json.dumps(rule["EventPattern"]))
    events.put_targets(Rule="OrderEventsRule", EventBusName=bus, Targets=rule["Targets"])
    return Subscriber(queue_url=queue_url, bus_name=bus)


# -- CommerceTable's stream, as Lambda delivers it ------------------------------------------------


class CommerceStream:
    """Reads CommerceTable's stream through moto's DynamoDB Streams API from the start, and shapes each
    record as Lambda's event source mapping does: ``eventSourceARN`` added, ApproximateCreationDateTime
    in epoch seconds, plain JSON. Each ``read`` returns the records written since the previous one."""

    def __init__(self, table: str = "CommerceTable") -> None:
        # botocore routes DynamoDB Streams to an account-id host that moto 5.2 does not recognise.
        self._streams = records_as_sent(
            boto3.client("dynamodbstreams", config=Config(account_id_endpoint_mode="disabled"))
        )
        self.arn = clients.dynamodb().describe_table(TableName=table)["Table"]["LatestStreamArn"]
        shards = self._streams.describe_stream(StreamArn=self.arn)["StreamDescription"]["Shards"]
        self._iterators = [
            self._streams.get_shard_iterator(
                StreamArn=self.arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
            for shard in shards
        ]

    def read(self) -> list[dict[str, Any]]:
        records = []
        for n, iterator in enumerate(self._iterators):
            response = self._streams.get_records(ShardIterator=iterator)
            records += [lambda_record(record, self.arn, "us-east-1") for record in response["Records"]]
            self._iterators[n] = response["NextShardIterator"]
        return records


def batch(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"Records": records}


def sequence_numbers(records: list[dict[str, Any]]) -> list[str]:
    return [record["dynamodb"]["SequenceNumber"] for record in records]


def failed_sequence_numbers(response: dict[str, Any]) -> list[str]:
    return [failure["itemIdentifier"] for failure in response["batchItemFailures"]]


def redelivery(records: list[dict[str, Any]], response: dict[str, Any]) -> list[dict[str, Any]]:
    """What Lambda delivers next after a partial batch response: the batch again, from the first
    failed record on (it checkpoints just before it)."""
    failed = set(failed_sequence_numbers(response))
    failed_at = [n for n, record in enumerate(records) if record["dynamodb"]["SequenceNumber"] in failed]
    return records[failed_at[0] :] if failed_at else []


def stable_id(delivered: dict[str, Any]) -> str:
    """The outbox event id a delivered event carries in its envelope."""
    return str(delivered["detail"]["metadata"]["event_id"])


# -- EventBridge failing on demand ----------------------------------------------------------------


@dataclass
class EventBridgeRefusals:
    """EventBridge under partial failure, as PutEvents reports it: the call succeeds, FailedEntryCount
    counts the refused entries and each of them carries an ErrorCode; only accepted entries reach the
    bus. Every ``every``-th distinct event is refused on each of its first ``attempts`` attempts.

    Installed as botocore event hooks on the shared EventBridge client, so the adapter under test and
    botocore's response handling run unchanged; the accepted entries go to moto through a client of
    their own.
    """

    every: int = 3
    attempts: int = 1
    calls: list[int] = field(default_factory=list)  # entries per PutEvents call
    refused: list[str] = field(default_factory=list)  # event ids, once per refusal
    _seen: list[str] = field(default_factory=list)
    _tries: dict[str, int] = field(default_factory=dict)

    def __enter__(self) -> "EventBridgeRefusals":
        self._delivery = boto3.client("events")
        hooks = clients.eventbridge().meta.events
        hooks.register("before-parameter-build.eventbridge.PutEvents", self._keep_entries)
        hooks.register("before-call.eventbridge.PutEvents", self._answer)
        return self

    def __exit__(self, *_: object) -> None:
        hooks = clients.eventbridge().meta.events
        hooks.unregister("before-parameter-build.eventbridge.PutEvents", self._keep_entries)
        hooks.unregister("before-call.eventbridge.PutEvents", self._answer)

    def _keep_entries(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["put_events_entries"] = copy.deepcopy(params["Entries"])

    def _refuses(self, entry: dict[str, Any]) -> bool:
        event_id = json.loads(entry["Detail"])["metadata"]["event_id"]
        if event_id not in self._tries:
            self._seen.append(event_id)
        self._tries[event_id] = self._tries.get(event_id, 0) + 1
        chosen = (self._seen.index(event_id) + 1) % self.every == 0
        if chosen and self._tries[event_id] <= self.attempts:
            self.refused.append(event_id)
            return True
        return False

    def _answer(self, context: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        entries = context["put_events_entries"]
        self.calls.append(len(entries))
        verdicts = [self._refuses(entry) for entry in entries]
        accepted = [entry for entry, refused in zip(entries, verdicts, strict=True) if not refused]
        delivered = iter(self._delivery.put_events(Entries=accepted)["Entries"] if accepted else [])
        results = [
            {"ErrorCode": "InternalFailure", "ErrorMessage": "Internal service error."} if refused else next(delivered)
            for refused in verdicts
        ]
        parsed = {
            "FailedEntryCount": sum("ErrorCode" in result for result in results),
            "Entries": results,
            "ResponseMetadata": {"HTTPStatusCode": 200},
        }
        return AWSResponse("https://events.us-east-1.amazonaws.com/", 200, {}, None), parsed


class EventBridgeOutage:
    """Every PutEvents call fails as a whole (503 ServiceUnavailable), as when the SDK's retries are
    exhausted. A botocore hook on the shared client, like EventBridgeRefusals."""

    def __enter__(self) -> "EventBridgeOutage":
        clients.eventbridge().meta.events.register("before-call.eventbridge.PutEvents", self._fail)
        return self

    def __exit__(self, *_: object) -> None:
        clients.eventbridge().meta.events.unregister("before-call.eventbridge.PutEvents", self._fail)

    @staticmethod
    def _fail(**_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        parsed = {
            "Error": {"Code": "ServiceUnavailable", "Message": "Service is unavailable."},
            "ResponseMetadata": {"HTTPStatusCode": 503},
        }
        return AWSResponse("https://events.us-east-1.amazonaws.com/", 503, {}, None), parsed


class PutEventsLog:
    """The number of entries of every PutEvents call made through the shared client (a botocore hook)."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.entries: list[dict[str, Any]] = []

    def __enter__(self) -> "PutEventsLog":
        clients.eventbridge().meta.events.register("before-parameter-build.eventbridge.PutEvents", self._record)
        return self

    def __exit__(self, *_: object) -> None:
        clients.eventbridge().meta.events.unregister("before-parameter-build.eventbridge.PutEvents", self._record)

    def _record(self, params: dict[str, Any], **_: Any) -> None:
        self.calls.append(len(params["Entries"]))
        self.entries += params["Entries"]


# -- the outbox as the tests see it ----------------------------------------------------------------


def place_orders(client: ApiClient, count: int) -> list[str]:
    """``count`` one-line orders of P-RED-TSHIRT; their ids."""
    return [placed_order(client, line("P-RED-TSHIRT"))["order_id"] for _ in range(count)]


def outbox_inserts(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records the commerce stream's FilterCriteria lets through: new outbox items."""
    changes = [streams.parse(DynamoDBRecord(record)) for record in records]
    return [
        record
        for record, change in zip(records, changes, strict=True)
        if change.kind is streams.ChangeKind.INSERT and change.entity_type == items.OUTBOX_EVENT
    ]


def event_id(record: dict[str, Any]) -> str:
    """The outbox event id of a stream record."""
    image = streams.parse(DynamoDBRecord(record)).new_image
    assert image is not None
    return str(image["event_id"])


def outbox_items() -> dict[str, dict[str, Any]]:
    return {item["event_id"]: item for item in table_items() if item["entity_type"] == items.OUTBOX_EVENT}


def unpublished() -> list[str]:
    """Event ids still in the sparse UnpublishedOutbox index (the items carrying its keys)."""
    return sorted(event_id for event_id, item in outbox_items().items() if "unpublished_pk" in item)


def write_outbox_item(item: dict[str, Any]) -> None:
    """An outbox item written as place_order writes it, for events the API cannot produce."""
    clients.dynamodb().put_item(TableName="CommerceTable", Item=dynamo.serialize(item))


def event_at(moment: datetime, **detail: Any) -> OutboxEvent:
    """An OrderPlaced event that occurred at ``moment``, its detail extended by ``detail``."""
    event = events.order_placed(order([("P-RED-TSHIRT", 1, euros(1999))], placed=moment))
    return event.model_copy(update={"detail": {**event.detail, **detail}})
