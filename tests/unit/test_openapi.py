"""The OpenAPI document says what is served: required headers, the gateway's 401, the guard's 400/415."""

import json
from typing import Any

import pytest

from local import cfn
from local.openapi import README, TABLE_END, TABLE_START, document, with_route_table

DOCUMENT = document()
OPERATIONS = {f"{method.upper()} {path}": op for path, ops in DOCUMENT["paths"].items() for method, op in ops.items()}


def _header(operation: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((p for p in operation.get("parameters", []) if p["in"] == "header" and p["name"] == name), None)


@pytest.mark.parametrize(
    ("operation", "header"),
    [
        ("POST /orders", "idempotency-key"),
        ("POST /products/{product_id}/stock", "idempotency-key"),
        ("PATCH /products/{product_id}", "if-match"),
        ("PATCH /users/me", "if-match"),
    ],
)
def test_a_header_the_service_requires_is_required_in_the_document(operation: str, header: str) -> None:
    parameter = _header(OPERATIONS[operation], header)
    assert parameter is not None
    assert parameter["required"] is True
    assert parameter["schema"]["type"] == "string"


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_every_401_is_documented_as_the_gateway_answers_it(operation: str) -> None:
    content = OPERATIONS[operation]["responses"]["401"]["content"]
    assert content["application/json"]["schema"] == {"$ref": "#/components/schemas/GatewayMessage"}
    assert DOCUMENT["components"]["schemas"]["GatewayMessage"]["required"] == ["message"]


@pytest.mark.parametrize("operation", sorted(name for name, op in OPERATIONS.items() if "requestBody" in op))
def test_every_route_with_a_body_documents_the_guards_400_and_415_as_problems(operation: str) -> None:
    responses = OPERATIONS[operation]["responses"]
    assert set(responses["400"]["content"]) == {"application/problem+json"}
    assert set(responses["415"]["content"]) == {"application/problem+json"}


def test_the_readmes_route_table_is_the_committed_documents() -> None:
    # given the document as committed (a template test keeps it equal to the routes)
    committed = json.loads((cfn.ROOT / "docs" / "openapi.json").read_text())
    readme = README.read_text()
    # then the README lists exactly its operations: `make openapi` rewrites both
    assert with_route_table(readme, committed) == readme, "README.md's route table is stale: run `make openapi`"
    table = readme.split(TABLE_START)[1].split(TABLE_END)[0]
    listed = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    assert listed == {f"{m.upper()} {p}" for p, ops in committed["paths"].items() for m in ops}
