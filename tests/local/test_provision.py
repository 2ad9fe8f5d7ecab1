"""Local resources come from template.yaml itself, against a moto server like the one the stack runs."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from moto.server import ThreadedMotoServer

from local import cfn
from local.auth import AUDIENCE
from local.dynamodb_local import free_port
from local.engines import Engines
from local.provision import Provisioned, function_environment, provision

PARAMETERS = {"JwtIssuer": "http://127.0.0.1:3000/__local/issuer", "JwtAudience": AUDIENCE}


@pytest.fixture(scope="module")
def moto_server() -> Iterator[str]:
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def engines(moto_server: str) -> Engines:
    requests.post(f"{moto_server}/moto-api/reset", timeout=5).raise_for_status()
    return Engines(aws_endpoint=moto_server, dynamodb_endpoint=moto_server, dynamodb_engine="moto")


@pytest.fixture
def provisioned(engines: Engines, tmp_path: Path) -> Provisioned:
    return provision(cfn.load(), engines, tmp_path, PARAMETERS)


def test_tables_are_created_with_the_templates_keys_indexes_and_stream(
    provisioned: Provisioned, engines: Engines
) -> None:
    # when the template is provisioned
    table = engines.client("dynamodb").describe_table(TableName="CommerceTable")["Table"]

    # then the table has the template's indexes and a stream whose ARN the resolver knows
    expected = {
        i["IndexName"] for i in cfn.load()["Resources"]["CommerceTable"]["Properties"]["GlobalSecondaryIndexes"]
    }
    assert {i["IndexName"] for i in table["GlobalSecondaryIndexes"]} == expected
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert provisioned.resolver.attributes[("CommerceTable", "StreamArn")] == table["LatestStreamArn"]
    ttl = engines.client("dynamodb").describe_time_to_live(TableName="CommerceTable")["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "expires_at"


def test_the_bus_takes_the_templates_name_and_its_rule_delivers_to_the_queue(
    provisioned: Provisioned, engines: Engines
) -> None:
    # given the provisioned bus, rule and subscriber queue
    assert provisioned.names["EventBus"] == "shopfeed-dev"
    queue_url = provisioned.resolver.attributes[("OrderEventsQueue", "QueueUrl")]

    # when a commerce event is put on the bus
    engines.client("events").put_events(
        Entries=[
            {"EventBusName": "shopfeed-dev", "Source": "shopfeed.commerce", "DetailType": "OrderPlaced", "Detail": "{}"}
        ]
    )

    # then the rule routes it to the queue
    messages = engines.client("sqs").receive_message(QueueUrl=queue_url, WaitTimeSeconds=1)["Messages"]
    assert json.loads(messages[0]["Body"])["detail-type"] == "OrderPlaced"


def test_queues_get_their_logical_ids_as_names(provisioned: Provisioned) -> None:
    assert provisioned.names["CommerceStreamDLQ"] == "CommerceStreamDLQ"
    arn = provisioned.resolver.attributes[("CommerceStreamDLQ", "Arn")]
    assert provisioned.queue_url(arn).endswith("/CommerceStreamDLQ")


def test_function_environments_resolve_to_local_names_and_a_local_cursor_secret(provisioned: Provisioned) -> None:
    # when the API and stream functions' environments are resolved
    api = function_environment(provisioned, cfn.function_properties("CommerceApiFunction"))
    stream = function_environment(provisioned, cfn.function_properties("CommerceStreamFunction"))

    # then Refs name the local resources, globals apply, and the secret's ARN became its value
    assert api["COMMERCE_TABLE_NAME"] == "CommerceTable"
    assert api["POWERTOOLS_LOG_LEVEL"] == "INFO"
    assert "CURSOR_SECRET_ARN" not in api
    assert len(api["CURSOR_SECRET"]) >= 32
    assert stream["EVENT_BUS_NAME"] == "shopfeed-dev"


def test_provisioning_again_reuses_what_exists_and_keeps_the_secret(engines: Engines, tmp_path: Path) -> None:
    # given a first run
    first = provision(cfn.load(), engines, tmp_path, PARAMETERS)

    # when the stack starts again against the same engine and state
    second = provision(cfn.load(), engines, tmp_path, PARAMETERS)

    # then nothing fails and cursors signed before still verify
    assert second.secret_values == first.secret_values
    assert (
        second.resolver.attributes[("CommerceTable", "StreamArn")]
        == first.resolver.attributes[("CommerceTable", "StreamArn")]
    )
