"""Local resources come from template.yaml itself, against a moto server like the one the stack runs."""

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import requests

from local import cfn
from local.engines import Engines
from local.provision import Provisioned, function_environment, provision
from tests.local.conftest import PROVISION_PARAMETERS as PARAMETERS


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


def test_the_archive_bucket_is_created_versioned_and_the_archiver_is_given_its_name(
    provisioned: Provisioned, engines: Engines
) -> None:
    # when the template is provisioned
    name = provisioned.names["ArchiveBucket"]
    archiver = function_environment(provisioned, cfn.function_properties("OrderArchiverFunction"))

    # then the bucket exists, versioned as declared, and the function names it
    assert engines.client("s3").get_bucket_versioning(Bucket=name)["Status"] == "Enabled"
    assert archiver["ARCHIVE_BUCKET_NAME"] == name == "archivebucket"


def test_each_function_gets_exactly_the_variables_its_template_entry_and_globals_declare(
    provisioned: Provisioned,
) -> None:
    template = cfn.load()
    globals_ = template["Globals"]["Function"]["Environment"]["Variables"]
    for name, resource in cfn.resources("AWS::Serverless::Function").items():
        if "Condition" in resource and not provisioned.resolver.condition(resource["Condition"]):
            continue  # not made in this stack (the search sync worker of a stack without search)
        # when a function's environment is resolved
        environment = function_environment(provisioned, cfn.function_properties(name))

        # then it holds its own variables and the global ones, no other function's
        own = (resource["Properties"].get("Environment") or {}).get("Variables") or {}
        assert environment.keys() == own.keys() | globals_.keys(), name

    api = function_environment(provisioned, cfn.function_properties("CommerceApiFunction"))
    stream = function_environment(provisioned, cfn.function_properties("CommerceStreamFunction"))
    assert api["COMMERCE_TABLE_NAME"] == "CommerceTable"
    assert api["POWERTOOLS_LOG_LEVEL"] == "INFO"
    assert stream["EVENT_BUS_NAME"] == "shopfeed-dev"
    assert stream["SEARCH_SYNC_QUEUE_URL"] == ""  # a stack without search queues no index writes


def test_the_cursor_secret_lives_in_secrets_manager_and_the_function_gets_its_arn(
    provisioned: Provisioned, engines: Engines
) -> None:
    # when the API function's environment is resolved
    api = function_environment(provisioned, cfn.function_properties("CommerceApiFunction"))

    # then it names the secret by ARN, as in AWS, and Secrets Manager holds a generated value
    value = engines.client("secretsmanager").get_secret_value(SecretId=api["CURSOR_SECRET_ARN"])["SecretString"]
    assert api["CURSOR_SECRET_ARN"].startswith("arn:aws:secretsmanager:")
    assert "CURSOR_SECRET" not in api
    assert len(value) == 48
    assert value.isalnum()


def test_provisioning_again_reuses_what_exists_and_keeps_the_secret(
    engines: Engines, moto_server: str, tmp_path: Path
) -> None:
    # given a first run
    first = provision(cfn.load(), engines, tmp_path, PARAMETERS)
    secret = _secret(engines, first)

    # when the stack starts again with the same state, against the same engine and then a fresh one
    second = provision(cfn.load(), engines, tmp_path, PARAMETERS)
    again = _secret(engines, second)
    requests.post(f"{moto_server}/moto-api/reset", timeout=5).raise_for_status()
    fresh = _secret(engines, provision(cfn.load(), engines, tmp_path, PARAMETERS))

    # then nothing fails and cursors signed before still verify
    assert again == fresh == secret
    assert (
        second.resolver.attributes[("CommerceTable", "StreamArn")]
        == first.resolver.attributes[("CommerceTable", "StreamArn")]
    )


def _secret(engines: Engines, provisioned: Provisioned) -> str:
    manager = engines.client("secretsmanager")
    return str(manager.get_secret_value(SecretId=provisioned.resolver.refs["CursorSecret"])["SecretString"])


def hardened(template: dict[str, Any]) -> dict[str, Any]:
    """The template with what production hardening adds: conditions, rules, log groups, alarms, a KMS key."""
    template = copy.deepcopy(template)
    template["Conditions"]["IsProd"] = {"Fn::Equals": [{"Ref": "Environment"}, "prod"]}
    template["Rules"] = {"Audience": {"Assertions": [{"Assert": {"Fn::Not": [{"Condition": "IsProd"}]}}]}}
    resources = template["Resources"]
    resources["AlarmTopic"] = {"Type": "AWS::SNS::Topic"}
    resources["TableKey"] = {"Type": "AWS::KMS::Key", "Condition": "IsProd"}
    resources["CommerceApiLogGroup"] = {
        "Type": "AWS::Logs::LogGroup",
        "Properties": {"LogGroupName": {"Fn::Sub": "/aws/lambda/${CommerceApiFunction}"}, "RetentionInDays": 30},
    }
    resources["ApiErrorsAlarm"] = {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {"AlarmActions": [{"Ref": "AlarmTopic"}], "Threshold": 1},
    }
    resources["CommerceTable"]["Properties"]["SSESpecification"] = {
        "Fn::If": ["IsProd", {"SSEEnabled": True, "KMSMasterKeyId": {"Ref": "TableKey"}}, {"Ref": "AWS::NoValue"}]
    }
    resources["CommerceApiFunction"]["Properties"]["ReservedConcurrentExecutions"] = {
        "Fn::If": ["IsProd", 50, {"Ref": "AWS::NoValue"}]
    }
    return template


def test_a_template_hardened_for_production_provisions_what_the_stack_emulates(
    engines: Engines, tmp_path: Path
) -> None:
    # when a template with resources the stack does not emulate is provisioned
    provisioned = provision(hardened(cfn.load()), engines, tmp_path, PARAMETERS)

    # then the emulated ones exist and the others are left out
    assert provisioned.kinds["CommerceTable"] == "AWS::DynamoDB::Table"
    assert not {"AlarmTopic", "TableKey", "CommerceApiLogGroup", "ApiErrorsAlarm"} & provisioned.kinds.keys()


def test_a_function_variable_naming_what_the_stack_does_not_emulate_is_an_error(
    engines: Engines, tmp_path: Path
) -> None:
    # given a function whose environment refers to the alarm topic
    template = hardened(cfn.load())
    template["Resources"]["CommerceApiFunction"]["Properties"]["Environment"]["Variables"]["TOPIC"] = {
        "Ref": "AlarmTopic"
    }
    provisioned = provision(template, engines, tmp_path, PARAMETERS)

    # when its environment is resolved, then the error names the variable, the resource and why
    with pytest.raises(cfn.UnresolvedReference, match=r"variable TOPIC: Ref AlarmTopic: .* AWS::SNS::Topic"):
        function_environment(provisioned, cfn.function_properties("CommerceApiFunction", template))
