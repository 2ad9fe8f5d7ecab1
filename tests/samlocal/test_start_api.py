"""`sam local start-api` serving the template's routes over HTTP, functions in Lambda containers.

start-api does not run the HTTP API's JWT authorizer; the derived template's samlocal_authorizer
layer passes the bearer token's claims to the function unverified (docs/sam-local.md).
"""

import uuid

import pytest
import requests

from local.harness.client import ApiClient
from local.harness.factories import create_product, line, money, order_body
from shopfeed.commerce import keys
from shopfeed.commerce.models import DEFAULT_WAREHOUSE
from tests.samlocal.helpers import LocalApi, bearer

pytestmark = [pytest.mark.samlocal, pytest.mark.xdist_group("samlocal")]
TIMEOUT = 120  # the first request starts the function's container


def test_start_api_get_product_answers_the_stored_product_with_its_etag(
    local_api: LocalApi, api_commerce: ApiClient
) -> None:
    # given
    created = create_product(api_commerce.as_user("U-ADMIN", "admin"), "P-RED-TSHIRT", available=10)

    # when
    answer = requests.get(f"{local_api.url}/products/P-RED-TSHIRT", headers=bearer("U100"), timeout=TIMEOUT)

    # then
    assert answer.status_code == 200, answer.text
    assert answer.headers["ETag"] == '"1"'
    assert answer.json() == created


def test_start_api_post_order_writes_the_order_and_decrements_stock(
    local_api: LocalApi, api_commerce: ApiClient
) -> None:
    # given
    create_product(api_commerce.as_user("U-ADMIN", "admin"), "P-BLK-CAP", price=1250, available=5)

    # when
    answer = requests.post(
        f"{local_api.url}/orders",
        json=order_body(line("P-BLK-CAP", 2, 1250)),
        headers=bearer("U100") | {"Idempotency-Key": str(uuid.uuid4())},
        timeout=TIMEOUT,
    )

    # then
    assert answer.status_code == 201, answer.text
    order = answer.json()
    assert (order["user_id"], order["status"], order["total"]) == ("U100", "Placed", money(2500))
    assert local_api.tables.item(keys.order(order["order_id"])) is not None
    # a product created with its stock holds it in one bucket of the default warehouse (decision 162)
    stock = local_api.tables.item(keys.stock_bucket("P-BLK-CAP", DEFAULT_WAREHOUSE, 0))
    assert stock is not None
    assert stock["available"] == 3


def test_start_api_without_a_token_answers_401_as_the_authorizer_would(local_api: LocalApi) -> None:
    # when
    answer = requests.get(f"{local_api.url}/products/P-RED-TSHIRT", timeout=TIMEOUT)

    # then
    assert answer.status_code == 401
    assert answer.json() == {"message": "Unauthorized"}
