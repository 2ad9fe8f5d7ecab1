"""The analytics export (EventBridge rule -> Firehose -> S3), as template.yaml declares it."""

from datetime import UTC, datetime
from typing import Any

import pytest

from local import cfn
from local.firehose import PartitionQuery, render_prefix
from shopfeed.commerce.events import SOURCE as COMMERCE_SOURCE

TEMPLATE = cfn.load()
RESOURCES = TEMPLATE["Resources"]
BUCKET_ARN = {"Fn::GetAtt": ["AnalyticsBucket", "Arn"]}
STREAM_ARN = {"Fn::GetAtt": ["AnalyticsDeliveryStream", "Arn"]}
NEXT_DAY = datetime(2026, 11, 27, 0, 10, tzinfo=UTC)


def props(name: str) -> dict[str, Any]:
    return dict(RESOURCES[name]["Properties"])


def destination() -> dict[str, Any]:
    return dict(props("AnalyticsDeliveryStream")["ExtendedS3DestinationConfiguration"])


def role_statements(role: str) -> list[dict[str, Any]]:
    (policy,) = props(role)["Policies"]
    return list(policy["PolicyDocument"]["Statement"])


def trusted_service(role: str) -> tuple[str, dict[str, Any]]:
    (statement,) = props(role)["AssumeRolePolicyDocument"]["Statement"]
    assert (statement["Effect"], statement["Action"]) == ("Allow", "sts:AssumeRole")
    return statement["Principal"]["Service"], statement["Condition"]


# -- the rule ----------------------------------------------------------------------------------------


def test_the_rule_takes_every_event_of_every_context_on_the_bus() -> None:
    rule = props("AnalyticsEventsRule")
    assert rule["EventBusName"] == {"Ref": "EventBus"}
    assert rule["EventPattern"] == {"source": [{"prefix": "shopfeed."}]}
    assert COMMERCE_SOURCE.startswith("shopfeed.")  # and the feed's shopfeed.feed, when it publishes


def test_the_rule_delivers_to_the_stream_retries_a_day_and_parks_what_it_could_not_deliver() -> None:
    (target,) = props("AnalyticsEventsRule")["Targets"]
    assert target["Arn"] == STREAM_ARN
    assert target["RoleArn"] == {"Fn::GetAtt": ["AnalyticsEventsRole", "Arn"]}
    assert target["RetryPolicy"]["MaximumEventAgeInSeconds"] == 86400
    assert target["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": ["AnalyticsEventsDLQ", "Arn"]}}
    (statement,) = props("AnalyticsEventsDLQPolicy")["PolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert statement["Condition"] == {"ArnEquals": {"aws:SourceArn": {"Fn::GetAtt": ["AnalyticsEventsRule", "Arn"]}}}


def test_eventbridge_may_only_put_records_into_the_analytics_stream() -> None:
    service, condition = trusted_service("AnalyticsEventsRole")
    assert service == "events.amazonaws.com"
    assert condition == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    (statement,) = role_statements("AnalyticsEventsRole")
    assert statement["Action"] == ["firehose:PutRecord", "firehose:PutRecordBatch"]
    assert statement["Resource"] == STREAM_ARN


# -- the delivery stream -------------------------------------------------------------------------------


def test_objects_are_partitioned_by_the_events_type_and_its_own_day() -> None:
    config = destination()
    assert config["BucketARN"] == BUCKET_ARN
    assert config["DynamicPartitioningConfiguration"]["Enabled"] is True
    processors = {p["Type"]: p for p in config["ProcessingConfiguration"]["Processors"]}
    parameters = {p["ParameterName"]: p["ParameterValue"] for p in processors["MetadataExtraction"]["Parameters"]}
    assert parameters["JsonParsingEngine"] == "JQ-1.6"
    assert "AppendDelimiterToRecord" in processors  # JSON Lines
    # when the query and the prefix are applied to an event that occurred just before midnight
    event = {"detail-type": "OrderPlaced", "time": "2026-11-26T23:59:59Z"}
    keys = PartitionQuery.parse(parameters["MetadataExtractionQuery"]).evaluate(event)
    assert keys is not None
    # then it lands on its own day, whenever it arrived
    assert render_prefix(config["Prefix"], arrival=NEXT_DAY, keys=keys) == "events/type=OrderPlaced/day=2026-11-26/"
    assert config["ErrorOutputPrefix"].startswith("errors/!{firehose:error-output-type}/")


def test_objects_are_compressed_and_buffered_by_a_parameter_within_firehoses_bounds() -> None:
    config = destination()
    assert config["CompressionFormat"] == "GZIP"
    assert config["BufferingHints"] == {"SizeInMBs": 64, "IntervalInSeconds": {"Ref": "AnalyticsBufferSeconds"}}
    parameter = TEMPLATE["Parameters"]["AnalyticsBufferSeconds"]
    assert (parameter["MinValue"], parameter["MaxValue"], parameter["Default"]) == (60, 900, 900)


def test_the_stream_is_encrypted_and_logs_its_delivery_errors() -> None:
    stream = props("AnalyticsDeliveryStream")
    assert stream["DeliveryStreamType"] == "DirectPut"
    assert stream["DeliveryStreamEncryptionConfigurationInput"] == {"KeyType": "AWS_OWNED_CMK"}
    logging = destination()["CloudWatchLoggingOptions"]
    assert logging == {
        "Enabled": True,
        "LogGroupName": {"Ref": "AnalyticsDeliveryLogs"},
        "LogStreamName": {"Ref": "AnalyticsDeliveryLogStream"},
    }


def test_firehose_may_only_write_to_the_analytics_bucket_and_its_own_log_stream() -> None:
    service, condition = trusted_service("AnalyticsDeliveryRole")
    assert service == "firehose.amazonaws.com"
    assert condition == {"StringEquals": {"sts:ExternalId": {"Ref": "AWS::AccountId"}}}
    assert destination()["RoleARN"] == {"Fn::GetAtt": ["AnalyticsDeliveryRole", "Arn"]}
    s3, logs = role_statements("AnalyticsDeliveryRole")
    assert all(action.startswith("s3:") and "Delete" not in action for action in s3["Action"])
    assert s3["Resource"] == [BUCKET_ARN, {"Fn::Sub": "${AnalyticsBucket.Arn}/*"}]
    assert logs["Action"] == "logs:PutLogEvents"
    assert "${AnalyticsDeliveryLogs}:log-stream:${AnalyticsDeliveryLogStream}" in logs["Resource"]["Fn::Sub"]


# -- the bucket ----------------------------------------------------------------------------------------


def test_the_analytics_bucket_is_encrypted_private_owned_by_the_stack_and_kept_after_it() -> None:
    bucket = RESOURCES["AnalyticsBucket"]
    assert (bucket["DeletionPolicy"], bucket["UpdateReplacePolicy"]) == ("Retain", "Retain")
    (rule,) = props("AnalyticsBucket")["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] in ("AES256", "aws:kms")
    assert set(props("AnalyticsBucket")["PublicAccessBlockConfiguration"].values()) == {True}
    assert len(props("AnalyticsBucket")["PublicAccessBlockConfiguration"]) == 4
    assert props("AnalyticsBucket")["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}


def test_the_analytics_bucket_refuses_every_request_without_tls() -> None:
    (statement,) = props("AnalyticsBucketPolicy")["PolicyDocument"]["Statement"]
    assert (statement["Effect"], statement["Principal"], statement["Action"]) == ("Deny", "*", "s3:*")
    assert statement["Resource"] == [BUCKET_ARN, {"Fn::Sub": "${AnalyticsBucket.Arn}/*"}]
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


@pytest.mark.parametrize("days", [None, "400"])
def test_events_move_to_infrequent_access_then_expire_after_the_retention_parameter(days: str | None) -> None:
    parameters = {"AnalyticsRetentionDays": days} if days else {}
    resolver = cfn.Resolver(TEMPLATE, parameters=parameters, stand_ins=True)
    rules = {r["Prefix"]: r for r in resolver.resolve(props("AnalyticsBucket"))["LifecycleConfiguration"]["Rules"]}
    expected = int(days or TEMPLATE["Parameters"]["AnalyticsRetentionDays"]["Default"])
    assert rules["events/"]["Transitions"] == [{"StorageClass": "STANDARD_IA", "TransitionInDays": 30}]
    assert int(rules["events/"]["ExpirationInDays"]) == expected
    assert int(rules["errors/"]["ExpirationInDays"]) == expected
    # S3 refuses an expiry that does not come after the transition
    assert TEMPLATE["Parameters"]["AnalyticsRetentionDays"]["MinValue"] > 30


def test_the_bucket_name_is_an_output() -> None:
    assert TEMPLATE["Outputs"]["AnalyticsBucketName"]["Value"] == {"Ref": "AnalyticsBucket"}
