"""The HTTP edge of the commerce API: identity, roles, problem+json shape, unknown routes, bad JSON."""

import importlib
import re
from typing import Any

import pytest

from local import cfn
from local.harness.client import Answer, ApiClient
from local.harness.factories import idempotency_key, if_match, line, order_body, product_body, user_body
from local.harness.tables import table_items

ORDER_ID = "01J00000000000000000000000"

# Every route of the API with a well-formed request: (method, path, body, query, headers).
ROUTES: list[tuple[str, str, Any, dict[str, Any], dict[str, str]]] = [
    ("POST", "/users", user_body(), {}, {}),
    ("GET", "/users/U100", None, {}, {}),
    ("PATCH", "/users/me", {"name": "Ada"}, {}, if_match('"1"')),
    ("POST", "/products", product_body(), {}, {}),
    ("GET", "/products/P-RED-TSHIRT", None, {}, {}),
    ("PATCH", "/products/P-RED-TSHIRT", {"name": "Tee"}, {}, if_match('"1"')),
    ("GET", "/products", None, {"category": "tshirts"}, {}),
    ("GET", "/search/products", None, {"q": "shirt"}, {}),
    ("POST", "/products/P-RED-TSHIRT/stock", {"quantity": 1}, {}, idempotency_key()),
    ("POST", "/orders", order_body(line()), {}, idempotency_key()),
    ("GET", f"/orders/{ORDER_ID}", None, {}, {}),
    ("GET", f"/orders/{ORDER_ID}/lines", None, {}, {}),
    ("GET", "/users/me/orders", None, {}, {}),
    ("GET", "/orders", None, {"status": "Placed", "month": "2026-10"}, {}),
    ("POST", f"/orders/{ORDER_ID}/cancel", None, {}, {}),
    (
        "POST",
        f"/orders/{ORDER_ID}/payments",
        {"amount": {"amount": 1999, "currency": "EUR"}, "payment_method": "tok_sandbox_visa"},
        {},
        idempotency_key(),
    ),
    ("GET", f"/orders/{ORDER_ID}/payments", None, {}, {}),
    ("GET", "/payments", None, {"status": "Pending"}, {}),
    ("POST", f"/orders/{ORDER_ID}/shipments", {"carrier": "dhl"}, {}, idempotency_key()),
    ("GET", f"/orders/{ORDER_ID}/shipments", None, {}, {}),
    ("GET", f"/orders/{ORDER_ID}/shipments/{ORDER_ID}", None, {}, {}),
    ("PATCH", f"/orders/{ORDER_ID}/shipments/{ORDER_ID}", {"status": "Shipped"}, {}, if_match('"1"')),
    ("GET", "/shipments", None, {"status": "Shipped", "carrier": "dhl", "month": "2026-10"}, {}),
    ("POST", "/posts", {"text": "hello", "tags": ["dynamodb"]}, {}, idempotency_key()),
    ("GET", f"/posts/{ORDER_ID}", None, {}, {}),
    ("DELETE", f"/posts/{ORDER_ID}", None, {}, {}),
    ("GET", "/users/U100/posts", None, {}, {}),
    ("GET", "/tags/dynamodb/posts", None, {}, {}),
    ("GET", "/search/posts", None, {"q": "sparse index", "tag": "dynamodb"}, {}),
    ("PUT", "/users/U100/followers/me", None, {}, {}),
    ("DELETE", "/users/U100/followers/me", None, {}, {}),
    ("GET", "/users/U100/followers", None, {}, {}),
    ("GET", "/users/U100/following", None, {}, {}),
    ("GET", "/feed", None, {}, {}),
    ("PUT", f"/posts/{ORDER_ID}/likes/me", None, {}, {}),
    ("DELETE", f"/posts/{ORDER_ID}/likes/me", None, {}, {}),
    ("GET", f"/posts/{ORDER_ID}/likes", None, {}, {}),
    ("POST", f"/posts/{ORDER_ID}/comments", {"text": "nice"}, {}, idempotency_key()),
    ("GET", f"/posts/{ORDER_ID}/comments", None, {}, {}),
    ("DELETE", f"/posts/{ORDER_ID}/comments/{ORDER_ID}", None, {}, {}),
    ("GET", "/notifications", None, {}, {}),
    ("POST", "/notifications/read", None, {}, {}),
    ("POST", f"/notifications/{ORDER_ID}/read", None, {}, {}),
    ("GET", "/leaderboards/authors", None, {"month": "2026-10"}, {}),
    ("POST", "/products/P-RED-TSHIRT/reviews", {"rating": 5, "title": "Soft"}, {}, {}),
    ("GET", "/products/P-RED-TSHIRT/reviews", None, {"sort": "rating"}, {}),
    ("GET", "/products/P-RED-TSHIRT/reviews/U100", None, {}, {}),
    ("PUT", "/products/P-RED-TSHIRT/reviews/me", {"rating": 4, "title": "Soft"}, {}, if_match('"1"')),
    ("DELETE", "/products/P-RED-TSHIRT/reviews/me", None, {}, {}),
    ("GET", "/users/U100/reviews", None, {}, {}),
    ("GET", "/inventory/snapshots", None, {"date": "2026-11-22"}, {}),
]


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


def route_id(route: tuple[str, str, Any, dict[str, Any], dict[str, str]]) -> str:
    return f"{route[0]} {route[1]}"


def send(
    client: ApiClient, method: str, path: str, body: Any, query: dict[str, Any], headers: dict[str, str]
) -> Answer:
    return client.request(method, path, body, query=query, headers=headers)


def assert_problem(answer: Answer, status: int) -> None:
    """An RFC 9457 problem document: its status, a type URI, a title and a detail."""
    assert answer.status == status
    assert answer.content_type == "application/problem+json"
    problem = answer.json
    assert problem["status"] == status
    assert problem["type"].startswith("https://")
    assert isinstance(problem["title"], str)
    assert problem["title"]
    assert isinstance(problem["detail"], str)
    assert problem["detail"]


@pytest.mark.parametrize("route", ROUTES, ids=route_id)
def test_every_route_answers_401_without_identity_and_writes_nothing(
    commerce_api: ApiClient, route: tuple[str, str, Any, dict[str, Any], dict[str, str]]
) -> None:
    # given: the function template.yaml routes the request to
    handler = importlib.import_module(cfn.handler_module(cfn.function_for(route[0], route[1]))).lambda_handler
    anonymous = ApiClient(handler, None)

    # when
    answer = send(anonymous, *route)

    # then
    assert_problem(answer, 401)
    assert table_items() == []


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
    + [route for route in ROUTES if route[0] == "GET" and route[1].endswith(("/lines", "/payments", "/shipments"))],
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
