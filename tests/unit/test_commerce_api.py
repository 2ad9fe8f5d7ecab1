"""The commerce API's HTTP edge with the real routers and the in-memory store injected (Powertools Depends).

Status codes, problem+json, validation, identity and header semantics, without any AWS.
"""

import json
from typing import Any

import pytest
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from local.harness.client import Answer, ApiClient
from local.harness.factories import idempotency_key, if_match, line, order_body, product_body, user_body
from shopfeed.accounts import routes as users
from shopfeed.accounts.bootstrap import accounts
from shopfeed.commerce import bootstrap
from shopfeed.commerce.routes import orders, products
from shopfeed.platform.http import build_resolver
from shopfeed.platform.idempotency import REPLAYED_HEADER
from shopfeed.platform.problems import PROBLEM_JSON
from tests.unit.accounts_fakes import InMemoryAccounts
from tests.unit.fakes import InMemoryCommerce
from tests.unit.feed_fakes import InMemoryFeed


@pytest.fixture
def app(store: InMemoryCommerce) -> APIGatewayHttpResolver:
    resolver = build_resolver(users.router, products.router, orders.router)
    resolver.dependency_overrides[bootstrap.repository] = lambda: store
    users_store = InMemoryAccounts(store, InMemoryFeed())
    resolver.dependency_overrides[accounts] = lambda: users_store
    return resolver


@pytest.fixture
def api(app: APIGatewayHttpResolver) -> ApiClient:
    return ApiClient(lambda event, context: app.resolve(event, context), sub="U100")


@pytest.fixture
def admin_api(api: ApiClient) -> ApiClient:
    return api.as_user("U-ADMIN", "admin")


def problem(answer: Answer, status: int) -> dict[str, Any]:
    assert (answer.status, answer.content_type) == (status, PROBLEM_JSON), answer.text
    body: dict[str, Any] = answer.json
    assert body["status"] == status
    return body


def test_a_domain_error_is_answered_as_problem_json_with_its_data(api: ApiClient) -> None:
    # when
    answer = api.get("/products/P-GHOST")
    # then
    assert problem(answer, 404) == {
        "type": "https://shopfeed.dev/problems/not-found",
        "title": "Resource not found",
        "status": 404,
        "detail": "product P-GHOST does not exist.",
        "resource": "product",
        "id": "P-GHOST",
    }


def test_a_malformed_body_is_422_with_field_locations_and_writes_nothing(
    admin_api: ApiClient, store: InMemoryCommerce
) -> None:
    # given
    body = product_body("P-RED-TSHIRT") | {"price": {"amount": -1, "currency": "eur"}}
    del body["name"]
    # when
    answer = admin_api.post("/products", body)
    # then
    errors = problem(answer, 422)["errors"]
    assert {tuple(e["loc"]) for e in errors} >= {
        ("body", "name"),
        ("body", "price", "amount"),
        ("body", "price", "currency"),
    }
    assert all("input" not in e for e in errors)  # locations and reasons, never the values sent
    assert store.get_product("P-RED-TSHIRT") is None


def test_a_request_without_claims_is_401_even_with_a_malformed_body(api: ApiClient) -> None:
    # given
    anonymous = api.as_user(None)
    # when
    reading, writing = anonymous.get("/users/me"), anonymous.post("/users", {"email": "nope"})
    # then
    assert problem(reading, 401)["title"] == "Authentication required"
    problem(writing, 401)


def test_an_unknown_route_is_a_problem_too(api: ApiClient) -> None:
    assert problem(api.get("/nowhere"), 404)["type"].endswith("/no-route")


def test_a_plain_user_is_forbidden_an_ops_list(api: ApiClient) -> None:
    problem(api.get("/orders", query={"status": "Placed", "month": "2026-03"}), 403)


def test_a_forged_cursor_is_a_bad_request(api: ApiClient) -> None:
    assert problem(api.get("/users/me/orders", query={"cursor": "forged.cursor"}), 400)["type"].endswith(
        "/invalid-cursor"
    )


def test_the_etag_read_is_the_if_match_that_updates(api: ApiClient) -> None:
    # given
    registered = api.post("/users", user_body(name="Ada"))
    read = api.get("/users/me")
    # when
    updated = api.patch("/users/me", {"name": "Countess"}, headers=if_match(read.headers["ETag"]))
    # then
    assert registered.status == 201
    assert registered.headers["Location"] == "/users/U100"
    assert read.headers["ETag"] == '"1"'
    assert (updated.status, updated.headers["ETag"], updated.json["name"]) == (200, '"2"', "Countess")


def test_an_update_with_a_stale_etag_is_412_naming_the_current_version(api: ApiClient) -> None:
    # given
    api.post("/users", user_body())
    api.patch("/users/me", {"name": "First"}, headers=if_match('"1"'))
    # when
    answer = api.patch("/users/me", {"name": "Second"}, headers=if_match('"1"'))
    # then
    assert problem(answer, 412)["current_version"] == 2
    assert api.get("/users/me").json["name"] == "First"


def test_an_update_without_if_match_is_428(api: ApiClient) -> None:
    api.post("/users", user_body())
    problem(api.patch("/users/me", {"name": "Blind"}), 428)


def test_someone_elses_profile_has_no_email_and_no_etag(api: ApiClient) -> None:
    # given
    api.post("/users", user_body(email="ada@example.com"))
    # when
    answer = api.as_user("U200").get("/users/U100")
    # then
    assert answer.status == 200
    assert answer.json["email"] is None
    assert "ETag" not in answer.headers


class TestPlacingAnOrder:
    @pytest.fixture(autouse=True)
    def catalog(self, admin_api: ApiClient) -> None:
        assert admin_api.post("/products", product_body("P-RED-TSHIRT", available=3)).status == 201

    def test_without_an_idempotency_key_is_400(self, api: ApiClient, store: InMemoryCommerce) -> None:
        assert problem(api.post("/orders", order_body(line())), 400)["type"].endswith("/idempotency-key-missing")
        assert store.events == ()

    def test_is_201_with_its_location(self, api: ApiClient) -> None:
        # when
        answer = api.post("/orders", order_body(line(quantity=2)), headers=idempotency_key())
        # then
        assert answer.status == 201
        assert answer.headers["Location"] == f"/orders/{answer.json['order_id']}"
        assert answer.json["total"] == {"amount": 2 * 1999, "currency": "EUR"}
        assert REPLAYED_HEADER not in answer.headers

    def test_retried_with_its_key_answers_the_same_order_marked_replayed(
        self, api: ApiClient, store: InMemoryCommerce
    ) -> None:
        # given
        key = idempotency_key()
        first = api.post("/orders", order_body(line()), headers=key)
        # when
        retried = api.post("/orders", order_body(line()), headers=key)
        # then
        assert (retried.status, retried.json) == (201, first.json)
        assert retried.headers[REPLAYED_HEADER] == "true"
        assert len(store.events) == 1

    def test_with_a_used_key_and_another_body_is_422(self, api: ApiClient) -> None:
        # given
        key = idempotency_key()
        api.post("/orders", order_body(line(quantity=1)), headers=key)
        # when
        answer = api.post("/orders", order_body(line(quantity=2)), headers=key)
        # then
        assert problem(answer, 422)["type"].endswith("/idempotency-key-reused")

    def test_beyond_the_stock_is_409_naming_the_product(self, api: ApiClient, store: InMemoryCommerce) -> None:
        # when
        answer = api.post("/orders", order_body(line(quantity=4)), headers=idempotency_key())
        # then
        assert problem(answer, 409)["products"] == [{"product_id": "P-RED-TSHIRT", "requested": 4, "available": 3}]
        assert store.events == ()

    def test_then_reading_it_back_carries_its_etag(self, api: ApiClient) -> None:
        # given
        placed = api.post("/orders", order_body(line()), headers=idempotency_key()).json
        # when
        answer = api.get(f"/orders/{placed['order_id']}")
        # then
        assert (answer.status, answer.json, answer.headers["ETag"]) == (200, placed, '"1"')


@pytest.mark.parametrize(
    ("number", "status"),
    [
        pytest.param("499.9999999999999999", 422, id="a float would round it to 500"),
        pytest.param("2.0000000000000000001", 422, id="a float would round it to 2"),
        pytest.param("2.5", 422, id="a fraction"),
        pytest.param("2.0", 201, id="a whole number written with a point"),
        pytest.param("2", 201, id="an integer"),
    ],
)
def test_a_json_number_is_read_exactly_never_rounded_to_an_integer(
    api: ApiClient, admin_api: ApiClient, store: InMemoryCommerce, number: str, status: int
) -> None:
    # given
    admin_api.post("/products", product_body("P-RED-TSHIRT", available=10))
    body = json.dumps(order_body(line(quantity=2))).replace('"quantity": 2', f'"quantity": {number}')
    # when
    answer = api.post("/orders", raw_body=body, headers=idempotency_key())
    # then
    assert answer.status == status, answer.text
    placed = store.get_product("P-RED-TSHIRT")
    assert placed is not None
    assert placed.available == (8 if status == 201 else 10)
