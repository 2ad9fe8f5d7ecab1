"""The fault injector (local/faults.py): AWS's failures as botocore parses them, at the rate and seed
asked, partial failures that really leave their entries undelivered, counted by operation and kind."""

import contextlib
import json
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import botocore.endpoint
import pytest
from botocore.awsrequest import AWSPreparedRequest
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from local.faults import CALLS, KINDS, PARTIAL, FaultSettings, Injector, Tally, generator
from local.lambdas import FunctionSpec, FunctionWorkers
from tests.support.moto_server import moto_server

# Nothing listens here: a request that leaves the process fails to connect, so a test sees at once
# whether an attempt was answered by the injector or sent.
NOWHERE = "http://127.0.0.1:9"
ONE_ATTEMPT = Config(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=1)
TWO_ATTEMPTS = Config(retries={"mode": "standard", "total_max_attempts": 2}, connect_timeout=1)
TRANSACTION = [{"ConditionCheck": {"TableName": "Items", "Key": {"PK": {"S": "a"}}, "ConditionExpression": "a = b"}}]


class Sent(list[AWSPreparedRequest]):
    """Requests the injector sent for real before it lost their answer (a read timeout)."""

    def __call__(self, request: AWSPreparedRequest) -> None:
        self.append(request)


def session_with(injector: Injector) -> boto3.Session:
    session = boto3.Session(region_name="us-east-1", aws_access_key_id="local", aws_secret_access_key="local")
    injector.register(session.events)
    return session


def only(kind: str, sent: Sent | None = None) -> Injector:
    """An injector that fails every attempt with ``kind``."""
    return Injector(1.0, random.Random(0), kinds=[kind], send=sent if sent is not None else Sent())


# (service, call, error code, HTTP status, whether botocore's standard mode retries it)
SERVICE_ERRORS = [
    ("dynamodb", "get_item", "ProvisionedThroughputExceededException", 400, True),
    ("dynamodb", "get_item", "ThrottlingException", 400, True),
    ("dynamodb", "get_item", "RequestLimitExceeded", 400, True),
    ("dynamodb", "get_item", "InternalServerError", 500, True),
    ("dynamodb", "put_item", "TransactionConflictException", 400, False),
    ("sqs", "send_message", "RequestThrottled", 400, True),
    ("sqs", "send_message", "InternalError", 500, True),
    ("events", "put_events", "ThrottlingException", 400, True),
    ("events", "put_events", "InternalException", 500, True),
    ("secretsmanager", "get_secret_value", "ThrottlingException", 400, True),
    ("secretsmanager", "get_secret_value", "InternalServiceError", 500, True),
    ("s3", "get_object", "SlowDown", 503, True),
    ("s3", "get_object", "InternalError", 500, True),
]
ARGUMENTS: dict[str, dict[str, Any]] = {
    "get_item": {"TableName": "Items", "Key": {"PK": {"S": "a"}}},
    "put_item": {"TableName": "Items", "Item": {"PK": {"S": "a"}}},
    "send_message": {"QueueUrl": f"{NOWHERE}/123456789012/q", "MessageBody": "x"},
    "put_events": {"Entries": [{"Source": "s", "DetailType": "d", "Detail": "{}"}]},
    "get_secret_value": {"SecretId": "s"},
    "get_object": {"Bucket": "bucket", "Key": "k"},
}


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's waits between attempts (up to 1 s after a throttle) skipped: what is retried is the
    point, not when."""
    monkeypatch.setattr(botocore.endpoint, "time", SimpleNamespace(sleep=lambda seconds: None))


@pytest.mark.usefixtures("no_backoff")
@pytest.mark.parametrize(("service", "call", "code", "status", "retried"), SERVICE_ERRORS)
def test_each_service_error_is_parsed_by_botocore_as_the_service_sends_it(
    service: str, call: str, code: str, status: int, retried: bool
) -> None:
    # given a client whose every attempt meets the error (and one retry allowed)
    injector = only(code)
    client = session_with(injector).client(service, endpoint_url=NOWHERE, config=TWO_ATTEMPTS)

    # when it is called
    with pytest.raises(ClientError) as raised:
        getattr(client, call)(**ARGUMENTS[call])

    # then botocore parsed the service's code and status, raised the service's modeled exception where
    # it has one, and retried exactly the errors its standard mode retries
    error = raised.value.response
    assert (error["Error"]["Code"], error["ResponseMetadata"]["HTTPStatusCode"]) == (code, status)
    modeled = getattr(client.exceptions, code, None)
    assert modeled is None or isinstance(raised.value, modeled)
    assert injector.tally.snapshot()[f"{_service_id(service)}.{_operation(call)}"][CALLS] == (2 if retried else 1)


def test_a_transaction_conflict_cancels_the_transaction_naming_one_of_its_items() -> None:
    # given a DynamoDB client whose transactions meet a conflicting one
    client = session_with(only("TransactionConflict")).client("dynamodb", endpoint_url=NOWHERE, config=TWO_ATTEMPTS)

    # when a transaction of three items is written
    with pytest.raises(client.exceptions.TransactionCanceledException) as raised:
        client.transact_write_items(TransactItems=TRANSACTION * 3)

    # then it is cancelled with one reason per item, one of them the conflict, and not retried by the SDK
    reasons = [reason["Code"] for reason in raised.value.response["CancellationReasons"]]
    assert sorted(reasons) == ["None", "None", "TransactionConflict"]
    assert raised.value.response["ResponseMetadata"]["RetryAttempts"] == 0


def test_a_connection_reset_is_raised_before_the_request_leaves() -> None:
    sent = Sent()
    client = session_with(only("ConnectionReset", sent)).client("dynamodb", endpoint_url=NOWHERE, config=TWO_ATTEMPTS)

    with pytest.raises(ConnectionClosedError):
        client.get_item(**ARGUMENTS["get_item"])

    assert sent == []


def test_a_read_timeout_comes_after_the_request_was_served_and_is_retried() -> None:
    # given a client whose answers are all lost on the way back
    sent = Sent()
    injector = only("ReadTimeout", sent)
    client = session_with(injector).client("dynamodb", endpoint_url=NOWHERE, config=TWO_ATTEMPTS)

    # when it writes
    with pytest.raises(ReadTimeoutError):
        client.transact_write_items(TransactItems=TRANSACTION)

    # then each attempt reached the service (the write happened, maybe twice), with the same
    # ClientRequestToken, which is what makes DynamoDB apply it once
    assert len(sent) == 2
    assert len({request.body for request in sent}) == 1
    assert b"ClientRequestToken" in sent[0].body  # type: ignore[operator]


def _forty_reads(worker: int, restored_as: int | None = None) -> dict[str, dict[str, int]]:
    """The faults 40 reads meet with worker ``worker``'s injector (reseeded as ``restored_as``'s first)."""
    injector = Injector(0.3, generator(7, "CommerceApiFunction", worker), send=Sent())
    if restored_as is not None:
        injector.reseed(7, "CommerceApiFunction", restored_as)
    client = session_with(injector).client("dynamodb", endpoint_url=NOWHERE, config=ONE_ATTEMPT)
    for _ in range(40):
        with contextlib.suppress(ClientError, BotoCoreError):  # faulted or not, only the counts matter
            client.get_item(**ARGUMENTS["get_item"])
    return injector.tally.snapshot()


def test_the_same_seed_draws_the_same_faults_and_another_worker_others() -> None:
    assert _forty_reads(0) == _forty_reads(0)
    assert _forty_reads(0) != _forty_reads(1)


def test_a_worker_restored_from_a_snapshot_draws_its_own_faults_not_the_snapshots() -> None:
    # a restored worker inherits the snapshot's injector (worker 0's generator), then is reseeded as itself
    assert _forty_reads(0, restored_as=1) == _forty_reads(1)
    assert _forty_reads(0, restored_as=1) != _forty_reads(0)


def test_faults_come_at_the_rate_asked() -> None:
    # given an injector at 10 % and 1,000 attempts
    injector = Injector(0.1, generator(3, "F", 0), send=Sent())
    client = session_with(injector).client("dynamodb", endpoint_url=NOWHERE, config=ONE_ATTEMPT)
    for _ in range(1000):
        with contextlib.suppress(ClientError, BotoCoreError):  # faulted, or sent to nowhere
            client.get_item(**ARGUMENTS["get_item"])

    # then about one in ten failed (within three standard deviations of the 100 expected)
    totals = injector.tally.totals()
    assert totals[CALLS] == 1000
    assert 71 <= totals["faults"] <= 129


def test_unknown_kinds_and_rates_outside_zero_to_one_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown fault kinds"):
        Injector(0.1, random.Random(), kinds=["Gremlins"])
    with pytest.raises(ValueError, match="probability"):
        Injector(5, random.Random())
    assert {"ProvisionedThroughputExceededException", "TransactionConflict", "ReadTimeout", PARTIAL} <= KINDS


def test_counts_add_up_across_workers() -> None:
    stack = Tally()
    stack.add({"dynamodb.GetItem": {CALLS: 10, "ThrottlingException": 1}})
    stack.add({"dynamodb.GetItem": {CALLS: 5}, "sqs.SendMessageBatch": {CALLS: 2, PARTIAL: 1}})

    assert stack.totals() == {CALLS: 17, "faults": 2}
    assert stack.summary() == [
        "dynamodb.GetItem: 15 calls; ThrottlingException 1",
        "sqs.SendMessageBatch: 2 calls; PartialFailure 1",
    ]


# -- partial failures, against a moto server: what was reported failed was really not delivered


@pytest.fixture(scope="module")
def aws() -> Iterator[str]:
    with moto_server() as endpoint:
        yield endpoint


def partial_failures(aws: str, service: str) -> Any:
    # Every batch call fails in part; each entry is dropped with even odds (at least one).
    injector = Injector(1.0, random.Random(3), kinds=[PARTIAL])
    return session_with(injector).client(service, endpoint_url=aws)


def test_a_send_message_batch_in_part_refused_delivers_only_what_it_reports_sent(aws: str) -> None:
    # given a queue
    sqs = boto3.client("sqs", endpoint_url=aws, region_name="us-east-1")
    queue = sqs.create_queue(QueueName="partial-sends")["QueueUrl"]

    # when ten messages are sent in one batch that fails in part
    answer = partial_failures(aws, "sqs").send_message_batch(
        QueueUrl=queue, Entries=[{"Id": str(n), "MessageBody": f"m{n}"} for n in range(10)]
    )

    # then the queue holds exactly the entries answered Successful, and every other one is in Failed
    sent = {entry["Id"] for entry in answer["Successful"]}
    failed = {entry["Id"] for entry in answer["Failed"]}
    assert failed
    assert sent | failed == {str(n) for n in range(10)}
    assert not sent & failed
    received = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    assert sorted(m["Body"] for m in received) == sorted(f"m{n}" for n in sent)
    assert all(entry["Code"] == "InternalError" and not entry["SenderFault"] for entry in answer["Failed"])


def test_a_batch_whose_every_entry_is_refused_sends_nothing(aws: str) -> None:
    sqs = boto3.client("sqs", endpoint_url=aws, region_name="us-east-1")
    queue = sqs.create_queue(QueueName="all-refused")["QueueUrl"]

    answer = partial_failures(aws, "sqs").send_message_batch(QueueUrl=queue, Entries=[{"Id": "0", "MessageBody": "m"}])

    assert [entry["Id"] for entry in answer["Failed"]] == ["0"]
    assert "Messages" not in sqs.receive_message(QueueUrl=queue)


def test_put_events_in_part_refused_answers_each_entry_where_it_was_and_delivers_only_the_rest(aws: str) -> None:
    # given a bus whose rule sends every event to a queue
    events = boto3.client("events", endpoint_url=aws, region_name="us-east-1")
    sqs = boto3.client("sqs", endpoint_url=aws, region_name="us-east-1")
    queue = sqs.create_queue(QueueName="partial-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.create_event_bus(Name="partial")
    events.put_rule(Name="all", EventBusName="partial", EventPattern='{"source": ["test"]}')
    events.put_targets(Rule="all", EventBusName="partial", Targets=[{"Id": "q", "Arn": arn}])

    # when ten events are put in one call that fails in part
    entries = [
        {"EventBusName": "partial", "Source": "test", "DetailType": "T", "Detail": f'{{"n": {n}}}'} for n in range(10)
    ]
    answer = partial_failures(aws, "events").put_events(Entries=entries)

    # then results are positional, the failed ones counted, and only the accepted ones delivered
    results = answer["Entries"]
    assert len(results) == 10
    refused = [n for n, result in enumerate(results) if "ErrorCode" in result]
    assert answer["FailedEntryCount"] == len(refused) > 0
    assert {results[n]["ErrorCode"] for n in refused} == {"InternalFailure"}
    delivered = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    assert sorted(_detail_n(m["Body"]) for m in delivered) == [n for n in range(10) if n not in refused]


def test_batch_writes_and_reads_in_part_unprocessed_leave_those_items_untouched(aws: str) -> None:
    # given a table
    dynamodb = boto3.client("dynamodb", endpoint_url=aws, region_name="us-east-1")
    dynamodb.create_table(
        TableName="PartialItems",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    faulted = partial_failures(aws, "dynamodb")

    # when ten items are written in one BatchWriteItem that is answered in part
    puts = [{"PutRequest": {"Item": {"PK": {"S": f"k{n}"}}}} for n in range(10)]
    written = faulted.batch_write_item(RequestItems={"PartialItems": puts})

    # then exactly the unprocessed ones are missing from the table
    unprocessed = {r["PutRequest"]["Item"]["PK"]["S"] for r in written["UnprocessedItems"]["PartialItems"]}
    stored = {item["PK"]["S"] for item in dynamodb.scan(TableName="PartialItems")["Items"]}
    assert unprocessed
    assert stored == {f"k{n}" for n in range(10)} - unprocessed

    # and a BatchGetItem answered in part hands the other keys back with the request's options
    keys = [{"PK": {"S": key}} for key in sorted(stored)]
    read = faulted.batch_get_item(RequestItems={"PartialItems": {"Keys": keys, "ConsistentRead": True}})
    left = read["UnprocessedKeys"]["PartialItems"]
    got = {item["PK"]["S"] for item in read["Responses"].get("PartialItems", [])}
    assert left["ConsistentRead"] is True
    assert got | {key["PK"]["S"] for key in left["Keys"]} == stored
    assert not got & {key["PK"]["S"] for key in left["Keys"]}


def _detail_n(body: str) -> int:
    return int(json.loads(body)["detail"]["n"])


def _service_id(service: str) -> str:
    return {"events": "eventbridge", "secretsmanager": "secrets-manager"}.get(service, service)


def _operation(call: str) -> str:
    return "".join(part.title() for part in call.split("_"))


# -- in the stack: the workers get the faults, the stack does not


@pytest.fixture(params=[False, True], ids=["on-demand", "snap-start"])
def faulted_pool(request: pytest.FixtureRequest) -> Iterator[FunctionWorkers]:
    spec = FunctionSpec(
        name="CommerceApiFunction",
        code_dir=Path(__file__).parent / "functions" / "probe",
        handler="app.handler",
        environment={"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"},
        timeout_s=60,
        faults=FaultSettings(rate=1.0, seed=7, kinds=("ThrottlingException",)),
        snap_start=request.param,
    )
    pool = FunctionWorkers(spec, 1)
    pool.start()
    yield pool
    pool.stop()


@pytest.mark.parametrize("snap_start", [False, True], ids=["on-demand", "snap-start"])
def test_two_workers_of_a_function_draw_different_faults(snap_start: bool, tmp_path: Path) -> None:
    # given a function with two workers, half of whose AWS calls fail (restored workers inherit the
    # snapshot's generator, in the state init left it, unless each is reseeded as itself)
    spec = FunctionSpec(
        name="CommerceApiFunction",
        code_dir=Path(__file__).parent / "functions" / "probe",
        handler="app.handler",
        environment={"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"},
        timeout_s=60,
        faults=FaultSettings(rate=0.5, seed=7, kinds=("ThrottlingException",)),
        snap_start=snap_start,
    )
    pool = FunctionWorkers(spec, 2)
    try:
        pool.start()
        # when each worker makes 20 calls, both held until both are done (so they are two workers)
        calls = {"do": "aws many", "endpoint": NOWHERE, "times": 20, "rendezvous": str(tmp_path), "parties": 2}
        with ThreadPoolExecutor(2) as threads:
            answers = list(threads.map(pool.invoke, [calls | {"id": "a"}, calls | {"id": "b"}], timeout=60))
    finally:
        pool.stop()

    # then the two drew different faults (the same 20 draws twice: one chance in a million)
    first, second = (answer.payload for answer in answers)
    assert first["pid"] != second["pid"]
    assert "ThrottlingException" in first["errors"]
    assert first["errors"] != second["errors"]


def test_a_function_run_with_faults_meets_them_in_its_own_clients_and_reports_them(
    faulted_pool: FunctionWorkers,
) -> None:
    # when the function makes an AWS call through boto3's default session
    answer = faulted_pool.invoke({"do": "aws", "endpoint": NOWHERE})

    # then the call met the fault, and the pool counted it from the worker's answer
    assert answer.payload == {"error": "ThrottlingException"}
    assert faulted_pool.faults.snapshot() == {"dynamodb.GetItem": {CALLS: 1, "ThrottlingException": 1}}

    # while the stack's own clients, in this process, are never faulted: the request leaves
    client = boto3.client("dynamodb", endpoint_url=NOWHERE, region_name="us-east-1", config=ONE_ATTEMPT)
    with pytest.raises(EndpointConnectionError):
        client.get_item(**ARGUMENTS["get_item"])
