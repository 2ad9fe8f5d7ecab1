"""Request bodies are read strictly: no true or "1" for a number, bounded counts and amounts, real currencies."""

from typing import Any

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, idempotency_key, line, money, order_body, product_body
from local.harness.tables import table_items
from shopfeed.commerce.types import MAX_STOCK
from tests.support.http_edge import assert_problem


def _with(body: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    target: Any = body
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return body


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param(("lines", 0, "quantity"), True, id="quantity true"),
        pytest.param(("lines", 0, "quantity"), "1", id="quantity string"),
        pytest.param(("lines", 0, "quantity"), 1.5, id="quantity fraction"),
        pytest.param(("lines", 0, "unit_price", "amount"), "1999", id="amount string"),
        pytest.param(("lines", 0, "unit_price", "currency"), "ABC", id="currency not ISO 4217"),
    ],
)
def test_an_order_with_a_coerced_number_answers_422_and_writes_nothing(
    admin: ApiClient, commerce_api: ApiClient, field: tuple[str | int, ...], value: Any
) -> None:
    # given
    create_product(admin)
    before = table_items()

    # when
    answer = commerce_api.post("/orders", _with(order_body(line()), field, value), headers=idempotency_key())

    # then
    assert_problem(answer, 422)
    assert table_items() == before


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param(("available",), "5", id="available string"),
        pytest.param(("available",), True, id="available true"),
        pytest.param(("available",), 10**39, id="available past 38 digits"),
        pytest.param(("available",), MAX_STOCK + 1, id="available past the maximum"),
        pytest.param(("price", "amount"), False, id="amount false"),
        pytest.param(("price", "currency"), "XTS", id="the ISO 4217 test code"),
        pytest.param(("price", "currency"), "eur", id="lowercase currency"),
    ],
)
def test_a_product_with_a_coerced_or_unbounded_field_answers_422_and_writes_nothing(
    admin: ApiClient, field: tuple[str, ...], value: Any
) -> None:
    # when
    answer = admin.post("/products", _with(product_body(), field, value))

    # then
    assert_problem(answer, 422)
    assert table_items() == []


@pytest.mark.parametrize("quantity", [True, "1", 0, 1_000_001])
def test_a_restock_of_a_coerced_or_unbounded_quantity_answers_422(admin: ApiClient, quantity: Any) -> None:
    # given
    create_product(admin)
    before = table_items()

    # when
    answer = admin.post("/products/P-RED-TSHIRT/stock", {"quantity": quantity}, headers=idempotency_key())

    # then
    assert_problem(answer, 422)
    assert table_items() == before


def test_a_restock_past_the_maximum_stock_answers_422_and_the_product_stays_readable(admin: ApiClient) -> None:
    # given
    create_product(admin, available=MAX_STOCK)
    before = table_items()

    # when
    answer = admin.post("/products/P-RED-TSHIRT/stock", {"quantity": 1}, headers=idempotency_key())

    # then
    assert_problem(answer, 422)
    assert table_items() == before
    read = admin.get("/products/P-RED-TSHIRT")
    assert (read.status, read.json["available"]) == (200, MAX_STOCK)


def test_a_restock_up_to_the_maximum_stock_is_accepted(admin: ApiClient) -> None:
    # given
    create_product(admin, available=MAX_STOCK - 5)

    # when
    answer = admin.post("/products/P-RED-TSHIRT/stock", {"quantity": 5}, headers=idempotency_key())

    # then
    assert answer.status == 201, answer.text
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == MAX_STOCK


def test_an_integral_json_number_is_an_integer(admin: ApiClient) -> None:
    # when: JSON has one number type; 2500.0 is the integer 2500
    answer = admin.post("/products", {**product_body(available=3), "price": {"amount": 2500.0, "currency": "EUR"}})

    # then
    assert answer.status == 201, answer.text
    assert answer.json["price"]["amount"] == 2500


@pytest.mark.parametrize("currency", ["EUR", "JPY", "XOF", "CHF"])
def test_a_product_in_an_iso_4217_currency_is_created(admin: ApiClient, currency: str) -> None:
    # when
    answer = admin.post("/products", {**product_body(), "price": money(100, currency)})

    # then
    assert answer.status == 201, answer.text
