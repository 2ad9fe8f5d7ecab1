"""The HTTP edge of every API function on ports that must not be used: what the edge refuses (no
identity, a body that is not JSON or cannot be decoded) is answered before any storage call, so these
run without moto. Each port a route depends on is an ``Untouched`` that logs any call made on it, and
every test asserts the log is empty: nothing written (nor read)."""

import base64
from typing import Any

import pytest

from local import cfn
from local.harness.client import ApiClient
from local.harness.factories import idempotency_key
from tests.support.http_edge import ROUTES, assert_problem, route_id, send
from tests.unit.edge import Edge

BODY_ROUTES = [route for route in ROUTES if route[2] is not None]


@pytest.fixture
def commerce_api(edge: Edge) -> ApiClient:
    return edge.client_of("CommerceApiFunction", "U100")


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
def test_every_route_answers_401_without_identity_and_writes_nothing(
    edge: Edge, route: tuple[str, str, Any, dict[str, Any], dict[str, str]]
) -> None:
    # given: the function template.yaml routes the request to
    anonymous = edge.client_of(cfn.function_for(route[0], route[1]), None)

    # when
    answer = send(anonymous, *route)

    # then
    assert_problem(answer, 401)
    assert edge.calls == []


@pytest.mark.parametrize(
    ("method", "path", "raw_body"),
    [
        pytest.param("POST", "/orders", "{not json", id="malformed JSON"),
        pytest.param("POST", "/users", '{"email": 42}', id="invalid body"),
        pytest.param("GET", "/orders/not-an-id", None, id="invalid path"),
    ],
)
def test_a_request_without_identity_answers_401_before_its_input_is_validated(
    commerce_api: ApiClient, method: str, path: str, raw_body: str | None
) -> None:
    # when
    answer = commerce_api.as_user(None).request(method, path, raw_body=raw_body)

    # then
    assert_problem(answer, 401)
    assert "errors" not in answer.json


@pytest.mark.parametrize("route", BODY_ROUTES, ids=route_id)
@pytest.mark.parametrize(
    "content_type",
    ["multipart/form-data", "multipart/form-data; boundary=x", "text/plain", "application/x-www-form-urlencoded"],
)
def test_every_body_route_answers_415_problem_to_a_body_that_is_not_json_and_writes_nothing(
    edge: Edge, route: tuple[str, str, Any, dict[str, Any], dict[str, str]], content_type: str
) -> None:
    # given
    method, path, _, query, headers = route
    admin = edge.client_of(cfn.function_for(method, path), "U-ADMIN", "admin")

    # when
    answer = admin.request(
        method, path, raw_body="--x\r\n\r\n", query=query, headers={**headers, "Content-Type": content_type}
    )

    # then
    assert_problem(answer, 415)
    assert answer.json["type"].endswith("/unsupported-media-type")
    assert edge.calls == []


@pytest.mark.parametrize(
    ("raw_body", "base64_encoded", "reason"),
    [
        pytest.param('{"lines": [', False, "not valid JSON", id="malformed JSON"),
        pytest.param('{"lines": [{"quantity": ' + "9" * 4301 + "}]}", False, "digits", id="4301-digit integer"),
        pytest.param(base64.b64encode(b'{"lines": "\xff\xfe"}').decode(), True, "not UTF-8", id="invalid UTF-8"),
        pytest.param('{"lines": "\ud800"}', False, "not UTF-8", id="lone surrogate"),
        pytest.param('{"lines": ["\\udbf2"]}', False, "surrogate", id="escaped lone surrogate"),
        pytest.param("[]", False, "JSON object", id="array"),
        pytest.param('"lines"', False, "JSON object", id="string"),
        pytest.param("42", False, "JSON object", id="number"),
        pytest.param('{"lines": NaN}', False, "NaN", id="NaN"),
        pytest.param('{"lines": [], "lines": [1]}', False, "twice", id="duplicate member"),
        pytest.param("[" * 60_000, False, "", id="deep nesting"),  # within the 64 KiB bound
    ],
)
def test_an_undecodable_body_answers_400_problem_and_writes_nothing(
    commerce_api: ApiClient, edge: Edge, raw_body: str, base64_encoded: bool, reason: str
) -> None:
    # when
    answer = commerce_api.post("/orders", raw_body=raw_body, headers=idempotency_key(), base64_encoded=base64_encoded)

    # then
    assert_problem(answer, 400)
    assert answer.json["type"].endswith("/malformed-body")
    assert reason in answer.json["detail"]
    assert edge.calls == []


def test_a_route_without_a_body_model_still_refuses_an_unreadable_body(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.post(
        "/orders/01J00000000000000000000000/cancel", raw_body="a=1", headers={"Content-Type": "multipart/form-data"}
    )

    # then
    assert_problem(answer, 415)


def test_an_anonymous_request_with_an_unreadable_body_answers_401(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.as_user(None).post("/orders", raw_body="x", headers={"Content-Type": "text/plain"})

    # then
    assert_problem(answer, 401)


def test_a_body_sent_without_a_media_type_answers_415(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.post("/users", raw_body="{}", headers={"Content-Type": ""})

    # then
    assert_problem(answer, 415)
