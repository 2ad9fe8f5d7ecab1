"""template.yaml is the truth for resources: these tests keep the code and the template in step."""

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from local import cfn
from local.openapi import render
from shopfeed.commerce import items, keys

ROOT = cfn.ROOT
TEMPLATE = cfn.load()
RESOURCES = TEMPLATE["Resources"]
FUNCTIONS = cfn.resources("AWS::Serverless::Function")
SAM = ROOT / ".tools" / "bin" / "sam"


def _index(table: str, name: str) -> dict[str, Any]:
    indexes = RESOURCES[table]["Properties"]["GlobalSecondaryIndexes"]
    return next(i for i in indexes if i["IndexName"] == name)


def _stream_mappings() -> list[tuple[str, dict[str, Any]]]:
    return [
        (function, event["Properties"])
        for function, resource in FUNCTIONS.items()
        for event in (resource["Properties"].get("Events") or {}).values()
        if event["Type"] == "DynamoDB"
    ]


def test_every_api_route_in_the_code_is_a_route_in_the_template_and_back() -> None:
    # given the routes the commerce function serves, read from its generated OpenAPI document
    document = json.loads(render())
    in_code = {(method.upper(), path) for path, methods in document["paths"].items() for method in methods}

    # when compared with the HttpApi events of the template
    in_template = {(method, path) for method, path, _ in cfn.http_routes()}

    # then neither has a route the other lacks
    assert in_code == in_template


def test_committed_openapi_document_matches_the_routes() -> None:
    committed = (ROOT / "docs" / "openapi.json").read_text()
    assert committed == render(), "docs/openapi.json is stale: run `make openapi`"


def test_every_function_entry_point_exists() -> None:
    for name, resource in FUNCTIONS.items():
        props = resource["Properties"]
        module, handler = props["Handler"].split(".")
        source = ROOT / props["CodeUri"] / f"{module}.py"
        assert source.is_file(), f"{name}: {source} missing"
        assert f"def {handler}(" in source.read_text(), f"{name}: no {handler} in {source}"


@pytest.mark.parametrize(
    ("index", "attributes"),
    [
        (keys.ORDERS_BY_USER.name, keys.ORDER_SUMMARY_ATTRIBUTES),
        (keys.ORDERS_BY_STATUS.name, keys.ORDER_SUMMARY_ATTRIBUTES),
        (keys.PRODUCTS_BY_CATEGORY.name, keys.PRODUCT_SUMMARY_ATTRIBUTES),
        (keys.UNPUBLISHED_OUTBOX.name, keys.OUTBOX_ATTRIBUTES),
        (keys.PENDING_PAYMENTS.name, keys.PAYMENT_ATTRIBUTES),
        (keys.SHIPMENTS_BY_ORDER.name, keys.SHIPMENT_ATTRIBUTES),
        (keys.SHIPMENTS_BY_STATUS.name, keys.SHIPMENT_ATTRIBUTES),
    ],
)
def test_index_projects_exactly_what_its_readers_map(index: str, attributes: tuple[str, ...]) -> None:
    projection = _index("CommerceTable", index)["Projection"]
    assert projection["ProjectionType"] == "INCLUDE"
    assert sorted(projection["NonKeyAttributes"]) == sorted(attributes)


def test_commerce_table_has_stream_ttl_recovery_and_encryption() -> None:
    props = RESOURCES["CommerceTable"]["Properties"]
    assert props["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert props["SSESpecification"]["SSEEnabled"] is True
    assert props["DeletionProtectionEnabled"] == {"Fn::If": ["DeletionProtected", True, False]}
    assert props["BillingMode"] == "PAY_PER_REQUEST"


def test_every_stream_mapping_has_the_failure_settings() -> None:
    mappings = _stream_mappings()
    assert mappings, "the template has no stream consumers"
    for function, props in mappings:
        assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"], function
        assert props["BisectBatchOnFunctionError"] is True, function
        assert 0 <= props["MaximumRetryAttempts"] <= 10, function
        assert 60 <= props["MaximumRecordAgeInSeconds"] <= 86400, function
        destination = props["DestinationConfig"]["OnFailure"]["Destination"]
        assert destination["Fn::GetAtt"][1] == "Arn", function
        assert RESOURCES[destination["Fn::GetAtt"][0]]["Type"] == "AWS::SQS::Queue", function
        assert props["FilterCriteria"]["Filters"], f"{function}: Lambda would be invoked for every record"


def test_a_stream_has_at_most_two_readers() -> None:
    readers: dict[str, int] = {}
    for _, props in _stream_mappings():
        table = props["Stream"]["Fn::GetAtt"][0]
        readers[table] = readers.get(table, 0) + 1
    assert all(count <= 2 for count in readers.values()), readers


def test_outbox_filter_matches_only_inserted_outbox_events() -> None:
    (relay,) = [p for f, p in _stream_mappings() if f == "CommerceStreamFunction"]
    pattern = json.loads(relay["FilterCriteria"]["Filters"][0]["Pattern"])
    assert pattern == {
        "eventName": ["INSERT"],
        "dynamodb": {"NewImage": {"entity_type": {"S": [items.OUTBOX_EVENT]}}},
    }


def test_api_function_may_touch_only_its_table_and_indexes() -> None:
    statements = FUNCTIONS["CommerceApiFunction"]["Properties"]["Policies"][0]["Statement"]
    for statement in statements:
        assert "*" not in json.dumps(statement["Action"]), statement
        assert statement["Resource"] != "*", statement
    dynamodb = next(s for s in statements if s["Action"][0].startswith("dynamodb:"))
    assert dynamodb["Resource"] == [
        {"Fn::GetAtt": ["CommerceTable", "Arn"]},
        {"Fn::Sub": "${CommerceTable.Arn}/index/*"},
    ]
    assert not {"dynamodb:Scan", "dynamodb:DeleteTable"} & set(dynamodb["Action"])


@pytest.mark.tooling
def test_sam_build_packages_every_function_and_the_layer(tmp_path: Path) -> None:
    # given a copy-free build into a temporary directory (the arm64 build, as deployed)
    build_dir = tmp_path / "build"

    # when
    result = subprocess.run(
        [
            str(SAM),
            "build",
            "--build-dir",
            str(build_dir),
            "--cached",
            "--cache-dir",
            str(ROOT / ".aws-sam" / "cache"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=_sam_env(),
    )

    # then every function and the layer are built, and the layer carries the shopfeed package
    assert result.returncode == 0, result.stdout + result.stderr
    for name in FUNCTIONS:
        assert (build_dir / name / "app.py").is_file(), name
    assert (build_dir / "SharedLayer" / "python" / "shopfeed" / "commerce" / "orders" / "repository.py").is_file()
    assert any((build_dir / "SharedLayer" / "python").glob("pydantic_core/*aarch64*.so")), "layer not built for arm64"


def _sam_env() -> dict[str, str]:
    # sam build needs a real python3.13 first on PATH (a pyenv shim pointing at another version fails).
    found = sorted(Path.home().glob(".pyenv/versions/3.13*/bin/python3.13"))
    python313 = found[-1] if found else Path(shutil.which("python3.13") or "python3.13")
    return {**os.environ, "SAM_CLI_TELEMETRY": "0", "PATH": f"{python313.parent}:{os.environ['PATH']}"}
