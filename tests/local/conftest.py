"""The local stack's own layer: its pollers, gateway and authorizer, against moto and small test consumers.

Pollers are driven one ``poll()`` at a time (``drain``), so a test decides when records move and
never sleeps. A record's fate is written in the item itself: ``fails`` (reported as a batch item
failure) or ``raises`` (the consumer throws) that many times before it succeeds, -1 for always.
"""

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
from botocore.config import Config
from moto import mock_aws

from local import cfn
from local.auth import AUDIENCE
from local.engines import Engines
from local.lambdas import LocalFunction
from local.provision import Provisioned, provision
from local.streams import SqsDestination, StreamPoller, StreamSettings
from tests.support.moto_server import moto_server as running_moto_server

TABLE = "PollerItems"
# The local stack's parameters: its own issuer (so the user pool and its trigger are not created).
PROVISION_PARAMETERS = {"JwtIssuer": "http://127.0.0.1:3000/__local/issuer", "JwtAudience": AUDIENCE}


class PoisonRecord(Exception):
    pass


@dataclass
class TestConsumer:
    """A stream consumer that records each batch it gets and fails the records told to fail."""

    batches: list[list[str]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    _attempts: Counter[str] = field(default_factory=Counter)

    __test__ = False  # not a test class, whatever pytest thinks of the name

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        records = event["Records"]
        self.events.append(event)
        self.batches.append([item_id(r) for r in records])
        for record in records:
            self._attempts[item_id(record)] += 1
        if any(self._still_failing(r, "raises") for r in records):
            raise PoisonRecord("a record told the consumer to raise")
        failed = [r for r in records if self._still_failing(r, "fails")]
        return {"batchItemFailures": [{"itemIdentifier": r["dynamodb"]["SequenceNumber"]} for r in failed]}

    def _still_failing(self, record: dict[str, Any], how: str) -> bool:
        times = int(record["dynamodb"].get("NewImage", {}).get(how, {}).get("N", "0"))
        return times < 0 or self._attempts[item_id(record)] <= times

    @property
    def delivered(self) -> list[str]:
        return [i for batch in self.batches for i in batch]


def item_id(record: dict[str, Any]) -> str:
    return str(record["dynamodb"]["Keys"]["id"]["S"])


@dataclass
class StreamTable:
    client: Any
    stream_arn: str

    def put(self, item_id: str, **attributes: Any) -> None:
        item = {"id": {"S": item_id}} | {k: _attribute(v) for k, v in attributes.items()}
        self.client.put_item(TableName=TABLE, Item=item)


def _attribute(value: Any) -> dict[str, str]:
    return {"N": str(value)} if isinstance(value, int) else {"S": str(value)}


@dataclass
class Queue:
    client: Any
    url: str

    def messages(self) -> list[str]:
        bodies = []
        while page := self.client.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10).get("Messages"):
            bodies += [m["Body"] for m in page]
            self.client.delete_message_batch(
                QueueUrl=self.url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(page)],
            )
        return bodies


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        yield


@pytest.fixture
def stream_table(aws: None) -> StreamTable:
    client = boto3.client("dynamodb")
    description = client.create_table(
        TableName=TABLE,
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )["TableDescription"]
    return StreamTable(client, description["LatestStreamArn"])


@pytest.fixture
def dlq(aws: None) -> Queue:
    client = boto3.client("sqs")
    return Queue(client, client.create_queue(QueueName="PollerDLQ")["QueueUrl"])


@pytest.fixture
def consumer() -> TestConsumer:
    return TestConsumer()


@pytest.fixture
def make_poller(stream_table: StreamTable, dlq: Queue, consumer: TestConsumer) -> Any:
    """Builds a poller of ``stream_table`` for ``consumer``, reporting discarded batches to ``dlq``."""

    def build(settings: StreamSettings, **options: Any) -> StreamPoller:
        return StreamPoller(
            function=LocalFunction("TestConsumer", consumer),
            stream_arn=stream_table.stream_arn,
            settings=settings,
            streams=streams_client(),
            destination=SqsDestination(dlq.client, dlq.url, "PollerDLQ"),
            source_name="PollerItems stream",
            retry_backoff_s=(0.0,),
            **options,
        )

    return build


def streams_client() -> Any:
    # botocore sends DynamoDB Streams calls to account-based endpoints ({account}.streams-ddb...),
    # which moto 5.2's in-process mock does not route; the regional endpoint it does.
    return boto3.client("dynamodbstreams", config=Config(account_id_endpoint_mode="disabled"))


def drain(poller: Any, rounds: int = 50) -> None:
    """Poll until a round moves nothing (bounded: a poller that never settles fails the test)."""
    for _ in range(rounds):
        if not poller.poll():
            return
    raise AssertionError(f"the poller still had work after {rounds} rounds")


# -- template.yaml provisioned on a moto server, as the stack runs it -------------------------------


@pytest.fixture(scope="module")
def moto_server() -> Iterator[str]:
    with running_moto_server() as endpoint:
        yield endpoint


@pytest.fixture
def engines(moto_server: str) -> Engines:
    requests.post(f"{moto_server}/moto-api/reset", timeout=5).raise_for_status()
    return Engines(aws_endpoint=moto_server, dynamodb_endpoint=moto_server, dynamodb_engine="moto")


@pytest.fixture
def provisioned(engines: Engines, tmp_path: Path) -> Provisioned:
    return provision(cfn.load(), engines, tmp_path, PROVISION_PARAMETERS)
