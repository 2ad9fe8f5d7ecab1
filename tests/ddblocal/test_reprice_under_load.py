"""A price change over more buckets than a transaction holds, racing a sale, on DynamoDB Local
(decision 225): buyers in their own containers quote the old or the new price while an admin's
container changes it. Every order is sold at exactly one price, every old-price sale happens before
every new-price sale (never both at once), no unit is made or lost, and every bucket ends open at the
new price."""

from collections import Counter
from dataclasses import replace

import pytest

from local.harness.client import Answer, ApiClient
from local.harness.factories import create_product, idempotency_key, if_match, line, money, order_body
from local.harness.race import Call, in_containers, settled
from shopfeed.commerce import bootstrap, items
from shopfeed.commerce.models import DEFAULT_WAREHOUSE
from tests.ddblocal.conftest import StoredItems

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

PRODUCT = "P-FLASH"
OLD, NEW = 1999, 2499
BUCKETS, UNITS = 120, 600
BUYERS, ORDERS_EACH = 6, 20


def test_orders_racing_a_price_change_over_120_buckets_sell_at_one_price_at_a_time(
    admin: ApiClient, stored: StoredItems
) -> None:
    # given 600 units over 120 buckets (more than one transaction holds) at 19.99
    create_product(admin, PRODUCT, available=UNITS, price=OLD)
    stock = bootstrap.repository().stock
    stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, 1, restock=0, buckets=BUCKETS)
    # buyers alternating the old and the new price, and an admin changing the price to 24.99
    buyers = [
        [
            Call("POST", "/orders", order_body(line(PRODUCT, 1, (OLD, NEW)[n % 2])), idempotency_key(), sub=f"U{b}-{n}")
            for n in range(ORDERS_EACH)
        ]
        for b in range(BUYERS)
    ]
    change = Call(
        "PATCH", f"/products/{PRODUCT}", {"price": money(NEW)}, if_match('"1"'), sub="U-ADMIN", groups=("admin",)
    )
    # (a PATCH out of time answers 409 contention and the same PATCH at the new ETag carries on)
    admin_share = [change, *[replace(change, headers=if_match('"2"'))] * 5]

    # when they all start at once
    served = in_containers([*buyers, admin_share], warm_up=Call("GET", f"/products/{PRODUCT}"))

    # then the price change succeeded (at once, or repeated after contention) and every order was
    # placed or refused for its price or as busy; a 503 is a call that ran out of its budget on a loaded
    # machine, whose write may have been applied (a PATCH after it may then meet version 2, or 3)
    admin_answers = [one.answer for one in served[-1]]
    assert {a.status for a in admin_answers} <= {200, 409, 412, 503}, [a.text for a in admin_answers]
    patched = next(one for one in served[-1] if one.answer.status == 200)
    calls = [call for share in buyers for call in share]
    orders = [one for share in served[:BUYERS] for one in share]
    assert {one.answer.status for one in orders} <= {201, 409, 503}
    refusals = {one.answer.json["type"].rsplit("/", 1)[-1] for one in orders if one.answer.status == 409}
    assert refusals <= {"price-changed", "contention"}
    old = [one for one in orders if one.answer.status == 201 and _price(one.answer) == OLD]
    new = [one for one in orders if one.answer.status == 201 and _price(one.answer) == NEW]
    assert len(old) + len(new) == sum(1 for one in orders if one.answer.status == 201)
    # (how the sale and the change interleave is the machine's: on a loaded one the change may end
    # before or after every buyer, so neither side is required to have sold in the race; the orders
    # after it show the new price selling)
    assert old or new

    # and no old-price order began after a new-price order was answered, nor after the change was
    # answered: the old price stopped selling before the new one started
    if new:
        first_new_answered = min(one.started + one.seconds for one in new)
        assert all(one.started < first_new_answered for one in old)
    assert all(one.started < patched.started + patched.seconds for one in old)

    # and the orders whose answer was lost (503), sent again with their key, were placed (in the race or
    # now) at one price, or refused
    resent = [
        settled(admin, call, one.answer) for call, one in zip(calls, orders, strict=True) if one.answer.status == 503
    ]
    assert {a.status for a in resent} <= {201, 409}
    late = [a for a in resent if a.status == 201]
    assert {_price(a) for a in late} <= {OLD, NEW}

    # and after the race the new price sells and the old one is refused
    after = [
        Call("POST", "/orders", order_body(line(PRODUCT, 1, price)), idempotency_key(), sub="U-AFTER")
        for price in (NEW, OLD)
    ]
    ((placed, refused),) = in_containers([after])
    placed_answer = settled(admin, after[0], placed.answer)
    assert placed_answer.status == 201, placed_answer.text
    assert _price(placed_answer) == NEW
    refused_answer = settled(admin, after[1], refused.answer)
    assert refused_answer.status == 409
    assert refused_answer.json["type"].endswith("/price-changed")

    # and every unit is accounted for: in its bucket, or on the line of an order that took it
    buckets = {int(b["bucket"]): b for b in stored.of(items.STOCK_BUCKET)}
    assert len(buckets) == BUCKETS
    assert min(int(b["available"]) for b in buckets.values()) >= 0
    taken = Counter[int]()
    for order_line in stored.of(items.ORDER_LINE, product_id=PRODUCT):
        for take in order_line["takes"]:
            taken[int(take["bucket"])] += int(take["quantity"])
    assert sum(taken.values()) == len(old) + len(new) + len(late) + 1  # and the one placed after the race
    assert sum(int(b["available"]) for b in buckets.values()) + sum(taken.values()) == UNITS

    # and every bucket is open at the new price, the layout's change finished
    assert all(b["price"]["amount"] == NEW and items.SEALED not in b for b in buckets.values())
    layout = stock.layout(PRODUCT)
    assert (layout.price.amount, layout.repricing) == (NEW, False)


def _price(answer: Answer) -> int:
    return int(answer.json["lines"][0]["unit_price"]["amount"])
