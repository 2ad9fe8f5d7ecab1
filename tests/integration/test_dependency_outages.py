"""The commerce API while DynamoDB fails as AWS fails (the local stack's injector on the API's client,
against a moto server: moto's in-process mock would answer the requests before the injector could):
the SDK's retries absorb what they can, what they cannot is a 503 with Retry-After, and a request sent
again with its Idempotency-Key takes effect once."""

import random
from collections.abc import Iterator

import pytest

from local.faults import Injector
from local.harness.client import Answer, ApiClient
from local.harness.factories import create_product, if_match, line, order_body, product_body
from local.harness.tables import create_tables
from shopfeed.platform import clients
from tests.conftest import reset_caches
from tests.integration.conftest import COMMERCE_TABLES
from tests.support.faults import FirstAttempts, injected
from tests.support.moto_backend import empty_tables
from tests.support.moto_server import moto_server

STOCK = 50
# Errors whose retries wait milliseconds (throttling backs off a second and more: tests/local covers it).
QUICK_FAULTS = ("InternalServerError", "ConnectionReset", "ReadTimeout")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with moto_server() as url:
        yield url


@pytest.fixture
def api(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[ApiClient]:
    """The commerce API with its clients sent over HTTP to the moto server, and a product in stock."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    reset_caches()
    missing = COMMERCE_TABLES - set(clients.dynamodb().list_tables()["TableNames"])
    if missing:
        create_tables(clients.dynamodb(), only=missing)
    from functions.commerce_api.app import lambda_handler

    create_product(ApiClient(lambda_handler).as_user("U-ADMIN", "admin"), available=STOCK)
    yield ApiClient(lambda_handler)
    empty_tables()


def sent_until_answered(api: ApiClient, key: str, tries: int = 10) -> Answer:
    """POST /orders as a client does: again, with the same key, after each 503."""
    for _ in range(tries):
        answer = api.post("/orders", order_body(line(quantity=1)), headers={"Idempotency-Key": key})
        if answer.status != 503:
            return answer
        assert answer.headers["Retry-After"] == "1", answer.text
    raise AssertionError(f"still 503 after {tries} tries")


def test_orders_placed_while_dynamodb_fails_half_its_attempts_each_take_effect_once(api: ApiClient) -> None:
    # given DynamoDB failing half the attempts: 5xx, connection resets, answers lost after the write
    faults = Injector(0.5, random.Random(11), kinds=QUICK_FAULTS)

    # when ten orders are placed, each sent again after a 503 with its key
    with injected(clients.dynamodb(), faults):
        answers = {f"order-{n}": sent_until_answered(api, f"order-{n}") for n in range(10)}

    # then each was answered 201 (some as the replay of an attempt whose answer was lost) ...
    assert {answer.status for answer in answers.values()} == {201}
    injected_kinds = {kind for row in faults.tally.snapshot().values() for kind in row} - {"calls"}
    assert injected_kinds == set(QUICK_FAULTS)
    # ... and placed exactly once: ten orders, ten units of stock
    listed = api.get("/users/me/orders").json["items"]
    assert sorted(o["order_id"] for o in listed) == sorted(a.json["order_id"] for a in answers.values())
    assert api.get("/products/P-RED-TSHIRT").json["available"] == STOCK - 10


def test_a_dependency_failure_the_sdk_cannot_absorb_is_503_and_the_retry_takes_effect_once(api: ApiClient) -> None:
    # given DynamoDB failing every attempt
    with injected(clients.dynamodb(), Injector(1.0, random.Random(0), kinds=["InternalServerError"])) as faults:
        # when an order is placed
        refused = api.post("/orders", order_body(), headers={"Idempotency-Key": "outage-1"})

    # then the SDK tried three times (the API's budget) its first call (the products' stock layouts),
    # and the client is told to come back
    assert faults.tally.snapshot()["dynamodb.BatchGetItem"] == {"calls": 3, "InternalServerError": 3}
    assert refused.status == 503
    assert refused.headers["Retry-After"] == "1"
    assert refused.json["type"] == "https://shopfeed.dev/problems/dependency-unavailable"

    # and once DynamoDB answers, the same request places the order, once
    placed = api.post("/orders", order_body(), headers={"Idempotency-Key": "outage-1"})
    again = api.post("/orders", order_body(), headers={"Idempotency-Key": "outage-1"})
    assert (placed.status, placed.headers.get("Idempotent-Replayed")) == (201, None)
    assert (again.status, again.json["order_id"]) == (201, placed.json["order_id"])
    assert [o["order_id"] for o in api.get("/users/me/orders").json["items"]] == [placed.json["order_id"]]


def test_a_read_that_cannot_reach_dynamodb_is_503_not_500(api: ApiClient) -> None:
    with injected(clients.dynamodb(), Injector(1.0, random.Random(0), kinds=["ConnectionReset"])):
        answer = api.get("/products/P-RED-TSHIRT")

    assert (answer.status, answer.headers["Retry-After"]) == (503, "1")


def test_a_product_created_by_an_attempt_whose_answer_was_lost_is_answered_created(api: ApiClient) -> None:
    # given the first attempt's answer lost after DynamoDB wrote the product (the SDK retries the put)
    admin = api.as_user("U-ADMIN", "admin")
    with injected(clients.dynamodb(), Injector(1.0, FirstAttempts(1), kinds=["ReadTimeout"])) as faults:
        # when the admin creates a product
        answer = admin.post("/products", product_body("P-LOST-ANSWER"))

    # then the retry, finding that very product, answers 201, not "already exists"
    assert faults.tally.snapshot()["dynamodb.TransactWriteItems"] == {"calls": 2, "ReadTimeout": 1}
    assert answer.status == 201, answer.text


def test_a_product_change_whose_answer_was_lost_is_answered_as_made_not_as_stale(api: ApiClient) -> None:
    # given the first attempt's answer lost after DynamoDB applied the change (version 1 → 2)
    admin = api.as_user("U-ADMIN", "admin")
    with injected(clients.dynamodb(), Injector(1.0, FirstAttempts(1), kinds=["ReadTimeout"])):
        # when the admin changes the product at version 1
        answer = admin.patch("/products/P-RED-TSHIRT", {"name": "Crimson T-Shirt"}, headers=if_match('"1"'))

    # then the retry, finding its own change, answers it: 200 at version 2, not 412
    assert answer.status == 200, answer.text
    assert (answer.json["name"], answer.headers["ETag"]) == ("Crimson T-Shirt", '"2"')
