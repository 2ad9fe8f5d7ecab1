"""The HTTP edge of the commerce API: identity, roles, problem+json shape, unknown routes, bad JSON."""

import re
from typing import Any

import pytest

from local import cfn
from local.harness.client import ApiClient
from local.harness.factories import idempotency_key, product_body
from local.harness.tables import table_items
from tests.support.http_edge import ORDER_ID, ROUTES, assert_problem, route_id, send


def test_the_route_examples_cover_every_route_of_the_template_once() -> None:
    # The examples carry a valid request per route; template.yaml says which routes exist.
    matched = {
        route.key
        for route in cfn.http_api_routes()
        for method, path, *_ in ROUTES
        if route.method == method and re.fullmatch(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(route.path)), path)
    }
    assert len(ROUTES) == len(cfn.http_api_routes())
    assert matched == {route.key for route in cfn.http_api_routes()}


@pytest.mark.parametrize(
    "route",
    # Catalog writes; a product's reviews are written by its buyers (tests/integration/test_reviews.py).
    [
        route
        for route in ROUTES
        if route[1].startswith("/products") and route[0] != "GET" and "/reviews" not in route[1]
    ],
    ids=route_id,
)
def test_admin_routes_answer_403_to_a_plain_user(
    commerce_api: ApiClient, admin: ApiClient, route: tuple[str, str, Any, dict[str, Any], dict[str, str]]
) -> None:
    # given
    admin.post("/products", product_body("P-RED-TSHIRT"))
    before = table_items()

    # when
    answer = send(commerce_api, *route)

    # then
    assert_problem(answer, 403)
    assert table_items() == before


def test_ops_route_answers_403_to_a_plain_user(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get("/orders", query={"status": "Placed"})

    # then
    assert_problem(answer, 403)


def test_a_caller_in_several_groups_has_the_rights_of_each(commerce_api: ApiClient) -> None:
    # given
    admin_and_ops = commerce_api.as_user("U-STAFF", "admin", "ops")

    # when
    created = admin_and_ops.post("/products", product_body())
    listed = admin_and_ops.get("/orders", query={"status": "Placed"})

    # then
    assert (created.status, listed.status) == (201, 200)


@pytest.mark.parametrize(
    "route",
    [
        route
        for route in ROUTES
        if route[0] == "GET"
        and route[1] in ("/products", "/users/me/orders", "/orders", "/payments", "/shipments", "/inventory/snapshots")
    ]
    + [
        route
        for route in ROUTES
        if route[0] == "GET" and route[1].endswith(("/lines", "/history", "/payments", "/shipments"))
    ],
    ids=route_id,
)
@pytest.mark.parametrize("cursor", ["garbage", "e30.e30"], ids=["garbage", "unsigned"])
def test_every_list_refuses_a_cursor_it_did_not_sign(
    ops: ApiClient, route: tuple[str, str, Any, dict[str, Any], dict[str, str]], cursor: str
) -> None:
    # given
    method, path, body, query, headers = route

    # when
    answer = send(ops, method, path, body, {**query, "cursor": cursor}, headers)

    # then
    assert_problem(answer, 400)
    assert answer.json["type"].endswith("/invalid-cursor")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        pytest.param("GET", "/nowhere", id="unknown path"),
        pytest.param("DELETE", f"/orders/{ORDER_ID}", id="unknown method"),
        pytest.param("GET", "/users/U100/orders", id="private list of another user"),
    ],
)
def test_an_unknown_route_answers_404_problem(commerce_api: ApiClient, method: str, path: str) -> None:
    # when
    answer = commerce_api.request(method, path)

    # then
    assert_problem(answer, 404)
    assert answer.json["type"].endswith("/no-route")


@pytest.mark.parametrize(
    ("raw_body", "expected_loc"),
    [
        pytest.param(None, ["body"], id="no body"),
        pytest.param('{"lines": "many"}', ["body", "lines"], id="wrong type"),
    ],
)
def test_a_body_of_the_wrong_shape_answers_422_with_its_location(
    commerce_api: ApiClient, raw_body: str | None, expected_loc: list[str]
) -> None:
    # when
    answer = commerce_api.post("/orders", raw_body=raw_body, headers=idempotency_key())

    # then
    assert_problem(answer, 422)
    assert [error["loc"] for error in answer.json["errors"]] == [expected_loc]
    assert table_items() == []


def test_validation_problems_do_not_echo_the_offending_values(commerce_api: ApiClient) -> None:
    # given
    secret = "4111-1111-1111-1111"

    # when
    answer = commerce_api.post("/users", {"email": secret, "name": "Ada"})

    # then
    assert_problem(answer, 422)
    assert secret not in answer.text


def test_domain_problems_carry_their_data_as_extension_members(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get("/products/P-NOPE")

    # then
    assert_problem(answer, 404)
    assert answer.json == {
        "type": "https://shopfeed.dev/problems/not-found",
        "title": "Resource not found",
        "status": 404,
        "detail": "product P-NOPE does not exist.",
        "resource": "product",
        "id": "P-NOPE",
    }


def test_successful_answers_are_json(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get("/users/me/orders")

    # then
    assert answer.status == 200
    assert answer.content_type == "application/json"
