"""The repository's reading of DynamoDB's answers, on Amazon's engine as well as on moto.

Short stock, unknown products, repriced lines, replays and stale versions all come back from the
engine as condition failures with the old item attached (ReturnValuesOnConditionCheckFailure=ALL_OLD).
These checks repeat expectations of tests/integration (moto) on DynamoDB Local, so the moto suite's
answers are known to hold on Amazon's engine, including its 100-action transaction limit.
"""

import pytest

from local.harness.client import ApiClient
from local.harness.factories import (
    create_product,
    create_products,
    if_match,
    line,
    order_body,
    place_order,
)
from shopfeed.commerce.models import MAX_ORDER_LINES
from tests.ddblocal.conftest import StoredItems
from tests.support.calls import dynamodb_calls

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]


def test_an_order_short_of_stock_names_every_short_product_with_what_is_left_and_writes_nothing(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=1)
    create_product(admin, "P-BLUE-MUG", available=0)
    create_product(admin, "P-GREEN-CAP", available=5)
    before = stored.all()

    # when
    with dynamodb_calls() as calls:
        answer = place_order(
            commerce_api,
            line("P-RED-TSHIRT", quantity=2),
            line("P-BLUE-MUG", quantity=1),
            line("P-GREEN-CAP", quantity=1),
        )

    # then
    assert answer.status == 409
    assert answer.json["type"] == "https://shopfeed.dev/problems/insufficient-stock"
    assert answer.json["products"] == [
        {"product_id": "P-RED-TSHIRT", "requested": 2, "available": 1},
        {"product_id": "P-BLUE-MUG", "requested": 1, "available": 0},
    ]
    # the layouts (a container's first order of them), the try, then the strong reads of the short
    # products' layouts and every bucket of them a refusal rests on (decision 156)
    assert calls.operations == ["BatchGetItem", "TransactWriteItems", "BatchGetItem", "BatchGetItem"]
    assert stored.all() == before


def test_an_order_for_an_unknown_product_names_it_and_writes_nothing(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=5)
    before = stored.all()

    # when
    answer = place_order(commerce_api, line("P-RED-TSHIRT"), line("P-NO-SUCH-THING"))

    # then
    assert answer.status == 404
    assert answer.json["type"] == "https://shopfeed.dev/problems/unknown-products"
    assert answer.json["product_ids"] == ["P-NO-SUCH-THING"]
    assert stored.all() == before


def test_an_order_quoting_an_old_price_shows_the_current_one_and_writes_nothing(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", price=2500, available=5)
    before = stored.all()

    # when
    answer = place_order(commerce_api, line("P-RED-TSHIRT", price=1999))

    # then
    assert answer.status == 409
    assert answer.json["type"] == "https://shopfeed.dev/problems/price-changed"
    assert answer.json["products"] == [
        {
            "product_id": "P-RED-TSHIRT",
            "quoted_unit_price": {"amount": 1999, "currency": "EUR"},
            "current_unit_price": {"amount": 2500, "currency": "EUR"},
        }
    ]
    assert stored.all() == before


def test_a_replayed_order_is_answered_from_the_cancelled_transaction_without_a_second_read(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=5)
    first = place_order(commerce_api, line("P-RED-TSHIRT", quantity=2), key="checkout-42")
    assert first.status == 201

    # when
    with dynamodb_calls() as calls:
        replay = place_order(commerce_api, line("P-RED-TSHIRT", quantity=2), key="checkout-42")

    # then
    assert replay.status == 201
    assert replay.json == first.json
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.headers["Location"] == first.headers["Location"]
    assert calls.operations == ["TransactWriteItems"]
    assert stored.units("P-RED-TSHIRT") == 3


def test_a_replay_after_the_stock_ran_out_is_still_answered_with_the_original_order(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given: the key record and the stock decrement both fail their conditions on the replay
    create_product(admin, "P-GREEN-CAP", available=3)
    first = place_order(commerce_api, line("P-GREEN-CAP", quantity=3), key="all-the-caps")
    assert first.status == 201

    # when
    replay = place_order(commerce_api, line("P-GREEN-CAP", quantity=3), key="all-the-caps")

    # then
    assert (replay.status, replay.json) == (201, first.json)
    assert stored.units("P-GREEN-CAP") == 0


def test_the_largest_allowed_order_fits_one_transaction_on_the_real_engine(
    commerce_api: ApiClient, admin: ApiClient
) -> None:
    # given: DynamoDB Local enforces the 100-action limit of TransactWriteItems
    product_ids = create_products(admin, MAX_ORDER_LINES, available=1)

    # when
    with dynamodb_calls() as calls:
        answer = place_order(commerce_api, *(line(product_id) for product_id in product_ids))

    # then
    assert answer.status == 201, answer.text
    assert len(answer.json["lines"]) == MAX_ORDER_LINES
    assert calls.operations == ["BatchGetItem", "TransactWriteItems"]  # the layouts, then the order


def test_a_reused_key_with_another_body_is_refused_in_one_call_and_writes_nothing(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=5)
    assert place_order(commerce_api, line("P-RED-TSHIRT", quantity=1), key="checkout-43").status == 201
    before = stored.all()

    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.post(
            "/orders",
            order_body(line("P-RED-TSHIRT", quantity=3)),
            headers={"Idempotency-Key": "checkout-43"},
        )

    # then
    assert answer.status == 422
    assert answer.json["type"] == "https://shopfeed.dev/problems/idempotency-key-reused"
    assert calls.operations == ["TransactWriteItems"]
    assert stored.all() == before


def test_a_stale_if_match_is_refused_with_the_current_version_read_from_the_failed_write(
    admin: ApiClient,
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", name="Red T-Shirt")
    assert admin.patch("/products/P-RED-TSHIRT", {"name": "Red Tee"}, headers=if_match('"1"')).status == 200

    # when
    with dynamodb_calls() as calls:
        answer = admin.patch("/products/P-RED-TSHIRT", {"name": "Crimson Tee"}, headers=if_match('"1"'))

    # then
    assert answer.status == 412
    assert answer.json["current_version"] == 2
    assert calls.operations == ["UpdateItem"]
    assert admin.get("/products/P-RED-TSHIRT").json["name"] == "Red Tee"
