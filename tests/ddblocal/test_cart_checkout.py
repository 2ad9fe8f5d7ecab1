"""Cart checkouts racing on DynamoDB Local, through the real handler, one container per request
(race.py): the checkout is the order placement's transaction, so the stock guard holds for carts too."""

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, idempotency_key
from local.harness.race import Call, all_at_once
from shopfeed.commerce import events, items
from tests.ddblocal.conftest import StoredItems

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

INSUFFICIENT_STOCK = "https://shopfeed.dev/problems/insufficient-stock"
CONTENTION = "https://shopfeed.dev/problems/contention"
BUYERS = [f"U{n:03d}" for n in range(50)]


def test_fifty_carts_checking_out_the_last_ten_units_sell_exactly_ten(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given fifty carts, each holding one of the ten units left
    create_product(admin, "P-LIMITED", available=10)
    for buyer in BUYERS:
        put = commerce_api.as_user(buyer).put("/users/me/cart/items/P-LIMITED", {"quantity": 1})
        assert put.status == 200, put.text
    checkouts = [Call("POST", "/users/me/cart/checkout", None, idempotency_key(), sub=buyer) for buyer in BUYERS]

    # when
    answers = all_at_once(checkouts, warm_up=Call("GET", "/users/me/cart"))

    # then ten orders, each its own buyer's
    sold = {call.sub: answer.json for call, answer in zip(checkouts, answers, strict=True) if answer.status == 201}
    refused = [answer for answer in answers if answer.status != 201]
    assert len(sold) == 10
    assert all(order["user_id"] == buyer for buyer, order in sold.items())
    assert {a.status for a in refused} == {409}
    assert {a.json["type"] for a in refused} <= {INSUFFICIENT_STOCK, CONTENTION}
    assert any(a.json["type"] == INSUFFICIENT_STOCK for a in refused)
    # the table holds exactly what the answers say
    assert stored.units("P-LIMITED") == 0
    assert sorted(o["order_id"] for o in stored.of(items.ORDER)) == sorted(o["order_id"] for o in sold.values())
    placed = stored.of(items.OUTBOX_EVENT, event_type=events.ORDER_PLACED)
    assert sorted(e["aggregate_id"] for e in placed) == sorted(o["order_id"] for o in sold.values())
    # the buyers' carts are empty, every other cart intact
    lines = stored.of(items.CART_LINE)
    assert sorted(line["user_id"] for line in lines) == sorted(set(BUYERS) - set(sold))
    assert all(line["quantity"] == 1 for line in lines)


def test_a_line_changed_while_its_cart_checks_out_is_either_ordered_or_kept(
    commerce_api: ApiClient, admin: ApiClient, stored: StoredItems
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=100)
    create_product(admin, "P-BLUE-MUG", available=100)
    buyer = commerce_api.as_user("U100")
    assert buyer.put("/users/me/cart/items/P-RED-TSHIRT", {"quantity": 2}).status == 200
    racing = [
        Call("POST", "/users/me/cart/checkout", None, idempotency_key()),
        Call("PUT", "/users/me/cart/items/P-BLUE-MUG", {"quantity": 3}),
    ]

    # when
    checkout, put = all_at_once(racing, warm_up=Call("GET", "/users/me/cart"))

    # then the mug was ordered (the put came first) or stays in the cart (it came after): never lost
    assert checkout.status == 201, checkout.text
    assert put.status == 200, put.text
    ordered = {line["product_id"] for line in checkout.json["lines"]}
    in_cart = {line["product_id"] for line in stored.of(items.CART_LINE)}
    assert "P-RED-TSHIRT" in ordered
    assert "P-RED-TSHIRT" not in in_cart
    assert ("P-BLUE-MUG" in ordered) != ("P-BLUE-MUG" in in_cart)
    assert stored.units("P-BLUE-MUG") == (97 if "P-BLUE-MUG" in ordered else 100)
