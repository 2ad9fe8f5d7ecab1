"""One request guard for every route: what it lets through reaches the tables. What it refuses never
reaches storage, so those tests run on the unit tier (tests/unit/test_http_edge.py)."""

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, idempotency_key, order_body, user_body


@pytest.fixture
def admin_with_product(admin: ApiClient) -> ApiClient:
    create_product(admin, "P-RED-TSHIRT", available=100)
    return admin


@pytest.mark.parametrize(
    "content_type", ["APPLICATION/JSON", "application/json; charset=UTF-8", "Application/Json;charset=utf-8"]
)
def test_json_media_types_are_read_whatever_their_case_and_charset(commerce_api: ApiClient, content_type: str) -> None:
    # when
    answer = commerce_api.post("/users", user_body(), headers={"Content-Type": content_type})

    # then
    assert answer.status == 201, answer.text


def test_an_order_with_a_valid_body_still_goes_through(admin_with_product: ApiClient, commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.post("/orders", order_body(), headers=idempotency_key())

    # then
    assert answer.status == 201, answer.text
