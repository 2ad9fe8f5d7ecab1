"""One request guard for every route: JSON objects sent as application/json, or a problem+json 400/415."""

import base64
from typing import Any

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, idempotency_key, order_body, user_body
from local.harness.tables import table_items
from tests.integration.test_http_edge import ROUTES, assert_problem, route_id

BODY_ROUTES = [route for route in ROUTES if route[2] is not None]


@pytest.fixture
def admin_with_product(admin: ApiClient) -> ApiClient:
    create_product(admin, "P-RED-TSHIRT", available=100)
    return admin


@pytest.mark.parametrize("route", BODY_ROUTES, ids=route_id)
@pytest.mark.parametrize(
    "content_type",
    ["multipart/form-data", "multipart/form-data; boundary=x", "text/plain", "application/x-www-form-urlencoded"],
)
def test_every_body_route_answers_415_problem_to_a_body_that_is_not_json_and_writes_nothing(
    admin_with_product: ApiClient, route: tuple[str, str, Any, dict[str, Any], dict[str, str]], content_type: str
) -> None:
    # given
    method, path, _, query, headers = route
    before = table_items()

    # when
    answer = admin_with_product.request(
        method, path, raw_body="--x\r\n\r\n", query=query, headers={**headers, "Content-Type": content_type}
    )

    # then
    assert_problem(answer, 415)
    assert answer.json["type"].endswith("/unsupported-media-type")
    assert table_items() == before


@pytest.mark.parametrize(
    "content_type", ["APPLICATION/JSON", "application/json; charset=UTF-8", "Application/Json;charset=utf-8"]
)
def test_json_media_types_are_read_whatever_their_case_and_charset(commerce_api: ApiClient, content_type: str) -> None:
    # when
    answer = commerce_api.post("/users", user_body(), headers={"Content-Type": content_type})

    # then
    assert answer.status == 201, answer.text


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
        pytest.param("[" * 100_000, False, "", id="deep nesting"),
    ],
)
def test_an_undecodable_body_answers_400_problem_and_writes_nothing(
    commerce_api: ApiClient, raw_body: str, base64_encoded: bool, reason: str
) -> None:
    # when
    answer = commerce_api.post("/orders", raw_body=raw_body, headers=idempotency_key(), base64_encoded=base64_encoded)

    # then
    assert_problem(answer, 400)
    assert answer.json["type"].endswith("/malformed-body")
    assert reason in answer.json["detail"]
    assert table_items() == []


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


def test_an_order_with_a_valid_body_still_goes_through(admin_with_product: ApiClient, commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.post("/orders", order_body(), headers=idempotency_key())

    # then
    assert answer.status == 201, answer.text
