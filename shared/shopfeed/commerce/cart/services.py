"""Use cases of the cart. No HTTP: callers pass plain values in.

A line keeps the unit price its product had when the line was last put; checkout orders at those
prices, and the order placement's stock conditions refuse the whole checkout if one has changed
since (PriceChanged names the lines and their new prices). Putting the line again accepts the new price.

An abandoned cart expires: every change sets the header's TTL ``CART_RETENTION`` ahead and refreshes
the TTL of lines that fell more than ``TTL_SLACK`` behind, so a change costs one or two more writes
at most, not one per line; the header's TTL is the earliest of its lines', so no line expires while
the cart lives and an expired cart reads as empty before TTL has deleted it.
"""

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Final, Protocol

from shopfeed.commerce import events
from shopfeed.commerce.errors import CartFull, EmptyCart
from shopfeed.commerce.models import MAX_CART_LINES, Cart, CartLine, Order, Product
from shopfeed.commerce.orders.services import new_order
from shopfeed.platform.clock import epoch_seconds, iso, utc_now
from shopfeed.platform.errors import Contention, DomainError, InvalidRequest, NotFound, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.identity import Caller
from shopfeed.platform.outbox import OutboxEvent

CART_RETENTION: Final = timedelta(days=30)
TTL_SLACK: Final = timedelta(days=1)
ATTEMPTS: Final = 4


class Carts(Protocol):
    """The storage port of the cart (CartRepository)."""

    def read(self, user_id: str) -> Cart: ...
    def product(self, product_id: str) -> Product | None: ...
    def save(self, before: Cart, after: Cart, put: Sequence[CartLine], delete: Sequence[str]) -> None: ...
    def check_out(
        self, cart: Cart, emptied: Cart, order: Order, event: OutboxEvent, request: IdempotentRequest, now: datetime
    ) -> Created[Order]: ...
    def replay(self, request: IdempotentRequest) -> Created[Order] | None: ...


def read_cart(carts: Carts, caller: Caller) -> Cart:
    """My cart: one Query. An expired cart has no lines."""
    return _live(carts.read(caller.user_id), utc_now())


def put_line(carts: Carts, caller: Caller, product_id: str, quantity: int, expected: int | None) -> Cart:
    """Set the quantity of a product in my cart, at the product's price now. ``expected``: the cart's
    version the client read (If-Match), or None to apply the change to the cart as it is."""
    product = carts.product(product_id)
    if product is None:
        raise NotFound("product", product_id)

    def change(cart: Cart, moment: datetime) -> tuple[tuple[CartLine, ...], CartLine | None]:
        existing = cart.line(product_id)
        if existing is None and len(cart.lines) >= MAX_CART_LINES:
            raise CartFull(MAX_CART_LINES)
        if any(line.unit_price.currency != product.price.currency for line in cart.lines if line is not existing):
            raise InvalidRequest(f"Your cart is priced in another currency than {product.price.currency}.")
        line = CartLine(
            product_id=product_id,
            quantity=quantity,
            unit_price=product.price,
            added_at=existing.added_at if existing else iso(moment),
            updated_at=iso(moment),
            expires_at=epoch_seconds(moment + CART_RETENTION),
        )
        others = tuple(other for other in cart.lines if other.product_id != product_id)
        return tuple(sorted((*others, line), key=lambda kept: kept.product_id)), line

    return _change(carts, caller, expected, change)


def remove_line(carts: Carts, caller: Caller, product_id: str, expected: int | None) -> Cart:
    """Take a product out of my cart; removing one that is not there changes nothing."""

    def change(cart: Cart, _: datetime) -> tuple[tuple[CartLine, ...], CartLine | None]:
        return tuple(line for line in cart.lines if line.product_id != product_id), None

    return _change(carts, caller, expected, change)


def check_out(carts: Carts, caller: Caller, request: IdempotentRequest, expected: int | None) -> Created[Order]:
    """Place an order from my cart and empty it, in the order placement's one transaction.

    A retry with the same key answers the order it placed, even once the cart is empty or changed."""
    for attempt in range(1, ATTEMPTS + 1):
        moment = utc_now()
        cart = _live(carts.read(caller.user_id), moment)
        try:
            if expected is not None and cart.version != expected:
                raise StaleVersion("cart", caller.user_id, cart.version)
            if not cart.lines:
                raise EmptyCart()
            order = new_order(
                caller, [(line.product_id, line.quantity, line.unit_price) for line in cart.lines], moment
            )
        except DomainError:
            # Refused before any write: the key may have placed an order already (from the cart it emptied).
            replayed = carts.replay(request)
            if replayed is not None:
                return replayed
            raise
        emptied = _header(cart, moment, ())
        try:
            return carts.check_out(cart, emptied, order, events.order_placed(order), request, moment)
        except StaleVersion:
            if expected is not None:
                raise  # the client named the cart it checks out: a changed cart is its 412
            if attempt == ATTEMPTS:
                raise Contention("your cart") from None
    raise AssertionError("unreachable")


# A change: the cart read and the moment → the lines it leaves and the line it puts (None if none).
_Change = Callable[[Cart, datetime], tuple[tuple[CartLine, ...], CartLine | None]]


def _change(carts: Carts, caller: Caller, expected: int | None, change: _Change) -> Cart:
    """Read, change, write guarded by the version read; a concurrent change re-reads (unless the
    client named a version: then it is told, 412), and a cart that keeps changing is a 409 to retry."""
    for attempt in range(1, ATTEMPTS + 1):
        moment = utc_now()
        stored = carts.read(caller.user_id)
        cart = _live(stored, moment)
        if expected is not None and cart.version != expected:
            raise StaleVersion("cart", caller.user_id, cart.version)
        lines, put = change(cart, moment)
        if lines == cart.lines and stored.lines == cart.lines:
            return cart  # nothing to write (a removed line that was not there)
        refreshed = tuple(_refreshed(line, moment) for line in lines)
        after = _header(stored, moment, refreshed)
        writes = [
            line
            for line, old in zip(refreshed, lines, strict=True)
            if line != old or (put and line.product_id == put.product_id)
        ]
        kept = {line.product_id for line in lines}
        # An expired cart's leftovers go with its first change, so they never come back to life.
        gone = [line.product_id for line in stored.lines if line.product_id not in kept]
        try:
            carts.save(stored, after, writes, gone)
        except StaleVersion:
            if expected is not None:
                raise  # the client named the cart it changes: a changed cart is its 412
            if attempt == ATTEMPTS:
                raise Contention("your cart") from None
            continue
        return after
    raise AssertionError("unreachable")


def _refreshed(line: CartLine, moment: datetime) -> CartLine:
    if line.expires_at >= epoch_seconds(moment + CART_RETENTION - TTL_SLACK):
        return line
    return line.model_copy(update={"expires_at": epoch_seconds(moment + CART_RETENTION)})


def _header(cart: Cart, moment: datetime, lines: tuple[CartLine, ...]) -> Cart:
    """``cart`` one version on, holding ``lines``; it expires with the earliest of them."""
    expires_at = min([epoch_seconds(moment + CART_RETENTION), *(line.expires_at for line in lines)])
    return Cart(
        user_id=cart.user_id, version=cart.version + 1, updated_at=iso(moment), expires_at=expires_at, lines=lines
    )


def _live(cart: Cart, moment: datetime) -> Cart:
    if cart.lines and cart.expired(epoch_seconds(moment)):
        return cart.model_copy(update={"lines": ()})
    return cart
