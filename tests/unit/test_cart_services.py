"""Cart use cases against a scripted store: the retry of a change that met a concurrent one, If-Match,
the checkout's refusals and replays, and which lines a change rewrites for their TTL."""

from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest

from local.harness.builders import NOW, euros, key_for, product
from shopfeed.commerce.cart import services
from shopfeed.commerce.errors import EmptyCart
from shopfeed.commerce.models import Cart, CartLine, Order, Product
from shopfeed.platform.clock import epoch_seconds, iso
from shopfeed.platform.errors import Contention, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.identity import Caller
from shopfeed.platform.outbox import OutboxEvent

SHIRT = product("P-SHIRT", price=euros(1999))
KEY = key_for("U100", "checkout-1", "check-out-cart", {})


def line(product_id: str, put_days_ago: float, quantity: int = 1) -> CartLine:
    at = NOW - timedelta(days=put_days_ago)
    return CartLine(
        product_id=product_id,
        quantity=quantity,
        unit_price=euros(1999),
        added_at=iso(at),
        updated_at=iso(at),
        expires_at=epoch_seconds(at + services.CART_RETENTION),
    )


def cart(*lines: CartLine, version: int = 3) -> Cart:
    return Cart(
        user_id="U100",
        version=version,
        updated_at=iso(NOW),
        expires_at=min(line.expires_at for line in lines) if lines else epoch_seconds(NOW + services.CART_RETENTION),
        lines=lines,
    )


class ScriptedCarts:
    """The cart port, its writes losing to ``conflicts`` concurrent changes first (StaleVersion)."""

    def __init__(self, stored: Cart, conflicts: int = 0, replayed: Created[Order] | None = None) -> None:
        self.stored, self.conflicts, self.replayed = stored, conflicts, replayed
        self.saves: list[tuple[Cart, Sequence[CartLine], Sequence[str]]] = []
        self.checkouts: list[Order] = []

    def read(self, user_id: str) -> Cart:
        return self.stored

    def product(self, product_id: str) -> Product | None:
        return SHIRT.model_copy(update={"product_id": product_id})

    def _lose_or_pass(self) -> None:
        if self.conflicts:
            self.conflicts -= 1
            raise StaleVersion("cart", "U100", self.stored.version + 1)

    def save(self, before: Cart, after: Cart, put: Sequence[CartLine], delete: Sequence[str]) -> None:
        self._lose_or_pass()
        self.saves.append((after, put, delete))
        self.stored = after

    def check_out(
        self, cart: Cart, emptied: Cart, order: Order, event: OutboxEvent, request: IdempotentRequest, now: datetime
    ) -> Created[Order]:
        self._lose_or_pass()
        self.checkouts.append(order)
        return Created(order)

    def replay(self, request: IdempotentRequest) -> Created[Order] | None:
        return self.replayed


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services, "utc_now", lambda: NOW)


def test_a_change_that_met_a_concurrent_one_is_applied_to_the_cart_read_again(ada: Caller) -> None:
    # given
    carts = ScriptedCarts(cart(line("P-MUG", 0)), conflicts=2)

    # when
    after = services.put_line(carts, ada, "P-SHIRT", 2, expected=None)

    # then
    assert [saved.version for saved, _, _ in carts.saves] == [4]
    assert [(kept.product_id, kept.quantity) for kept in after.lines] == [("P-MUG", 1), ("P-SHIRT", 2)]


def test_a_change_naming_the_version_it_read_is_not_retried(ada: Caller) -> None:
    # given
    carts = ScriptedCarts(cart(line("P-MUG", 0)), conflicts=1)

    # when / then
    with pytest.raises(StaleVersion):
        services.put_line(carts, ada, "P-SHIRT", 2, expected=3)
    assert carts.saves == []


def test_a_change_that_keeps_losing_gives_up(ada: Caller) -> None:
    # given
    carts = ScriptedCarts(cart(line("P-MUG", 0)), conflicts=services.ATTEMPTS)

    # when / then
    with pytest.raises(Contention):
        services.remove_line(carts, ada, "P-MUG", expected=None)
    assert carts.saves == []


def test_only_the_put_line_and_lines_a_day_behind_are_written(ada: Caller) -> None:
    # given a line put five days ago and one put an hour ago
    carts = ScriptedCarts(cart(line("P-OLD", 5), line("P-NEW", 1 / 24)))

    # when
    services.put_line(carts, ada, "P-SHIRT", 1, expected=None)

    # then
    [(after, written, deleted)] = carts.saves
    assert sorted(written_line.product_id for written_line in written) == ["P-OLD", "P-SHIRT"]
    assert deleted == []
    assert after.expires_at == min(kept.expires_at for kept in after.lines)
    assert after.expires_at >= epoch_seconds(NOW + services.CART_RETENTION - services.TTL_SLACK)


def test_a_checkout_that_keeps_meeting_changes_is_contention(ada: Caller) -> None:
    # given
    carts = ScriptedCarts(cart(line("P-SHIRT", 0)), conflicts=services.ATTEMPTS)

    # when / then
    with pytest.raises(Contention):
        services.check_out(carts, ada, KEY, expected=None)
    assert carts.checkouts == []


def test_a_checkout_met_by_a_change_orders_the_cart_read_again_or_with_if_match_refuses(ada: Caller) -> None:
    # given
    retried = ScriptedCarts(cart(line("P-SHIRT", 0)), conflicts=1)
    named = ScriptedCarts(cart(line("P-SHIRT", 0)), conflicts=1)

    # when
    placed = services.check_out(retried, ada, KEY, expected=None)
    with pytest.raises(StaleVersion):
        services.check_out(named, ada, KEY, expected=3)

    # then
    assert retried.checkouts == [placed.value]
    assert named.checkouts == []


@pytest.mark.parametrize("expected", [None, 2], ids=["empty cart", "stale If-Match"])
def test_a_checkout_refused_before_its_transaction_answers_the_order_its_key_placed(
    ada: Caller, expected: int | None
) -> None:
    # given the cart the key's checkout emptied, version 4
    first = services.check_out(ScriptedCarts(cart(line("P-SHIRT", 0))), ada, KEY, expected=None)
    carts = ScriptedCarts(cart(version=4), replayed=Created(first.value, replayed=True))

    # when
    answer = services.check_out(carts, ada, KEY, expected=expected)

    # then
    assert answer == Created(first.value, replayed=True)
    assert carts.checkouts == []


def test_an_empty_cart_without_a_placed_order_is_refused(ada: Caller) -> None:
    # when / then
    with pytest.raises(EmptyCart):
        services.check_out(ScriptedCarts(cart(version=4)), ada, KEY, expected=None)


def test_an_expired_cart_reads_empty_and_its_next_change_deletes_the_leftovers(ada: Caller) -> None:
    # given a cart last changed 31 days ago
    carts = ScriptedCarts(cart(line("P-OLD", 31)))

    # when
    read = services.read_cart(carts, ada)
    services.put_line(carts, ada, "P-SHIRT", 1, expected=None)

    # then
    assert (read.lines, read.version) == ((), 3)
    [(after, _, deleted)] = carts.saves
    assert [kept.product_id for kept in after.lines] == ["P-SHIRT"]
    assert deleted == ["P-OLD"]
