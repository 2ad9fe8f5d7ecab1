"""The archive bucket, the OrdersByAge and Catalog indexes, the archiver and the snapshot function, as
template.yaml declares them."""

import json
from typing import Any

import pytest

from local import cfn
from shopfeed.commerce import keys
from shopfeed.commerce.archive import archiver as archive
from shopfeed.commerce.settings import InventorySnapshotSettings, OrderArchiverSettings
from shopfeed.platform.config import Settings
from shopfeed.platform.dynamo import IndexSpec

TEMPLATE = cfn.load()
RESOURCES = TEMPLATE["Resources"]


def props(name: str) -> dict[str, Any]:
    return dict(RESOURCES[name]["Properties"])


def statements(function: str) -> list[dict[str, Any]]:
    return list(props(function)["Policies"][0]["Statement"])


def listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


# -- the bucket -------------------------------------------------------------------------------------


def test_the_archive_bucket_outlives_the_stack_like_the_tables() -> None:
    bucket = RESOURCES["ArchiveBucket"]
    assert (bucket["DeletionPolicy"], bucket["UpdateReplacePolicy"]) == ("Retain", "Retain")


def test_the_archive_bucket_is_encrypted_private_versioned_and_owned_by_the_stack() -> None:
    bucket = props("ArchiveBucket")
    (rule,) = bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] in ("AES256", "aws:kms")
    assert bucket["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    assert bucket["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}


def test_archived_objects_move_to_a_colder_class_and_replaced_versions_are_kept_for_a_while() -> None:
    (rule,) = props("ArchiveBucket")["LifecycleConfiguration"]["Rules"]
    assert rule["Status"] == "Enabled"
    assert rule["Prefix"] == archive.OBJECT_PREFIX
    assert rule["Transitions"] == [{"StorageClass": "GLACIER_IR", "TransitionInDays": 30}]
    assert rule["NoncurrentVersionExpiration"]["NoncurrentDays"] >= 30
    assert "ExpirationInDays" not in rule  # archived orders are business records: never expired


def test_the_archive_bucket_refuses_every_request_without_tls() -> None:
    policy = props("ArchiveBucketPolicy")
    assert policy["Bucket"] == {"Ref": "ArchiveBucket"}
    (statement,) = policy["PolicyDocument"]["Statement"]
    assert (statement["Effect"], statement["Principal"], statement["Action"]) == ("Deny", "*", "s3:*")
    assert statement["Resource"] == [
        {"Fn::GetAtt": ["ArchiveBucket", "Arn"]},
        {"Fn::Sub": "${ArchiveBucket.Arn}/*"},
    ]
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


# -- the indexes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("index", [keys.ORDERS_BY_AGE, keys.CATALOG_INDEX], ids=lambda index: str(index.name))
def test_an_archive_index_has_the_keys_of_keys_py_and_projects_only_keys(index: IndexSpec) -> None:
    declared = {i["IndexName"]: i for i in props("CommerceTable")["GlobalSecondaryIndexes"]}
    spec = declared[str(index.name)]
    assert spec["KeySchema"] == [
        {"AttributeName": index.partition_key, "KeyType": "HASH"},
        {"AttributeName": index.sort_key, "KeyType": "RANGE"},
    ]
    # The readers take ids from the keys; a projected attribute would only cost index writes.
    assert spec["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    definitions = {d["AttributeName"]: d["AttributeType"] for d in props("CommerceTable")["AttributeDefinitions"]}
    assert definitions[index.partition_key] == definitions[index.sort_key] == "S"


# -- the functions ----------------------------------------------------------------------------------


def test_the_archiver_queries_only_its_index_and_reaches_only_its_prefix_of_the_bucket() -> None:
    index, table, bucket = statements("OrderArchiverFunction")
    assert (index["Action"], index["Resource"]) == (
        "dynamodb:Query",
        {"Fn::Sub": "${CommerceTable.Arn}/index/OrdersByAge"},
    )
    assert table["Resource"] == {"Fn::GetAtt": ["CommerceTable", "Arn"]}
    assert sorted(table["Action"]) == [
        "dynamodb:BatchWriteItem",
        "dynamodb:DeleteItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
    ]
    assert sorted(bucket["Action"]) == ["s3:GetObject", "s3:PutObject"]
    assert bucket["Resource"] == {"Fn::Sub": f"${{ArchiveBucket.Arn}}/{archive.OBJECT_PREFIX}*"}


def test_the_snapshot_reads_the_catalog_and_products_and_writes_in_batches_only() -> None:
    index, table = statements("InventorySnapshotFunction")
    assert (index["Action"], index["Resource"]) == ("dynamodb:Query", {"Fn::Sub": "${CommerceTable.Arn}/index/Catalog"})
    assert (sorted(table["Action"]), table["Resource"]) == (
        ["dynamodb:BatchGetItem", "dynamodb:BatchWriteItem"],
        {"Fn::GetAtt": ["CommerceTable", "Arn"]},
    )


@pytest.mark.parametrize("function", ["OrderArchiverFunction", "InventorySnapshotFunction"])
def test_a_job_may_neither_scan_nor_use_wildcards(function: str) -> None:
    for statement in statements(function):
        actions = listed(statement["Action"])
        assert not [a for a in actions if "*" in a or a == "dynamodb:Scan"], statement
        assert "*" not in json.dumps(statement["Resource"]).replace("/orders/*", ""), statement


@pytest.mark.parametrize(
    ("function", "expression"),
    [("OrderArchiverFunction", "rate(1 hour)"), ("InventorySnapshotFunction", "cron(5 0 * * ? *)")],
)
def test_each_job_runs_on_its_schedule_with_retries(function: str, expression: str) -> None:
    (event,) = props(function)["Events"].values()
    assert event["Type"] == "ScheduleV2"
    assert event["Properties"]["ScheduleExpression"] == expression
    assert event["Properties"]["RetryPolicy"]["MaximumRetryAttempts"] >= 1


def test_archive_runs_never_overlap_by_default() -> None:
    parameter = TEMPLATE["Parameters"]["OrderArchiverConcurrency"]
    assert (parameter["Default"], parameter["MaxValue"]) == (1, 1)


@pytest.mark.parametrize(
    ("function", "settings"),
    [("OrderArchiverFunction", OrderArchiverSettings), ("InventorySnapshotFunction", InventorySnapshotSettings)],
)
def test_a_job_is_given_every_setting_without_a_default(function: str, settings: type[Settings]) -> None:
    variables = cfn.function_properties(function, TEMPLATE)["Environment"]["Variables"]
    required = {name.upper() for name, field in settings.model_fields.items() if field.is_required()}
    assert required <= set(variables)
    # Every function's own (Powertools', the SDK's call budget) are the Globals'; the rest are the job's.
    every_function = set(TEMPLATE["Globals"]["Function"]["Environment"]["Variables"])
    assert set(variables) - every_function <= {name.upper() for name in settings.model_fields}


def test_the_archiver_stops_beginning_batches_well_before_its_timeout() -> None:
    margin = OrderArchiverSettings.model_fields["archive_stop_margin_seconds"].default
    assert 0 < margin < props("OrderArchiverFunction")["Timeout"] / 2


@pytest.mark.parametrize(
    ("alarm", "function", "period"),
    [
        ("OrderArchiverFailedAlarm", "OrderArchiverFunction", 3 * 3600),
        ("InventorySnapshotFailedAlarm", "InventorySnapshotFunction", 86400),
    ],
)
def test_a_job_that_fails_or_stops_running_raises_an_alarm(alarm: str, function: str, period: int) -> None:
    spec = props(alarm)
    assert spec["Metrics"][0]["Expression"] == "FILL(invocations, 0) - FILL(errors, 0)"
    for metric in spec["Metrics"][1:]:
        assert metric["MetricStat"]["Metric"]["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": function}}]
        assert metric["MetricStat"]["Period"] == period
    assert (spec["ComparisonOperator"], spec["Threshold"], spec["TreatMissingData"]) == (
        "LessThanThreshold",
        1,
        "breaching",
    )
