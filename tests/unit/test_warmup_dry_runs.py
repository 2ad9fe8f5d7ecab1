"""Priming botocore without calling AWS (decision 216): the dry runs of ``platform.warmup`` build what a
client's first call of each operation builds, answer every request in process, and leave the client as
they found it."""

import socket
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError

from shopfeed.platform import dynamo, warmup


@pytest.fixture
def unreachable() -> Any:
    """A DynamoDB client whose endpoint nobody listens on: any request that left the process would fail."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return boto3.client(
        "dynamodb",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id="dry",
        aws_secret_access_key="dry",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=1),
    )


def test_the_dry_runs_call_every_operation_of_the_routes_and_send_nothing(unreachable: Any) -> None:
    # given two tables on a client that cannot reach any endpoint, and a record of the calls made
    made: list[tuple[str, str]] = []

    def record(model: Any, http_response: Any, **_: Any) -> None:
        made.append((model.name, http_response.headers["x-amzn-requestid"]))

    unreachable.meta.events.register("after-call.dynamodb", record)
    tables = (dynamo.Table(unreachable, "CommerceTable"), dynamo.Table(unreachable, "FeedTable"))

    # when they are primed
    ran = warmup.dry_run_dynamodb(*tables)

    # then each operation ran on each table (and the batch read on both together), answered in process
    operations = {name for name, _ in made}
    assert operations == {
        "GetItem",
        "Query",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "TransactWriteItems",
        "BatchGetItem",
    }
    assert ran == len(made) == 2 * 6 + 3
    assert {request_id for _, request_id in made} == {warmup.DRY_RUN_REQUEST_ID}


def test_after_the_dry_runs_a_call_goes_to_the_network_again(unreachable: Any) -> None:
    # given a primed client
    warmup.dry_run_dynamodb(dynamo.Table(unreachable, "CommerceTable"))

    # when the application calls it, then the request is sent (and here finds no one)
    with pytest.raises(EndpointConnectionError):
        unreachable.get_item(TableName="CommerceTable", Key={"PK": {"S": "a"}, "SK": {"S": "b"}})


def test_a_dry_run_write_could_never_write_were_it_sent() -> None:
    # given the writes the dry runs make
    writes = warmup._dry_runs("CommerceTable")
    conditions = [
        writes["put_item"]["ConditionExpression"],
        writes["update_item"]["ConditionExpression"],
        writes["delete_item"]["ConditionExpression"],
        writes["transact_write_items"]["TransactItems"][0]["ConditionCheck"]["ConditionExpression"],
    ]
    # then each is conditioned on an attribute both existing and not
    assert set(conditions) == {"attribute_exists(#w) AND attribute_not_exists(#w)"}
