"""Domain objects for the tests and the benchmarks, valid by default: each test states only what it is about."""

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from shopfeed.commerce import events
from shopfeed.commerce.models import Customer, Order, OrderLine, OrderMove, OrderStatus, Product
from shopfeed.platform.clock import iso, new_id
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.types import Money

EARLIER = datetime(2026, 3, 5, 9, 30, tzinfo=UTC)
NOW = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)
MONTH = f"{NOW:%Y-%m}"
NEXT_MONTH = f"{NOW.replace(day=1) + timedelta(days=31):%Y-%m}"


def euros(amount: int) -> Money:
    return Money(amount=amount, currency="EUR")


def customer(
    user_id: str = "U100", email: str | None = None, name: str = "Ada Lovelace", *, email_verified: bool = False
) -> Customer:
    at = iso(EARLIER)
    return Customer(
        user_id=user_id,
        email=email or f"{user_id.lower()}@example.com",
        email_verified=email_verified,
        name=name,
        created_at=at,
        updated_at=at,
        version=1,
    )


def product(
    product_id: str = "P-RED-TSHIRT", available: int = 10, price: Money | None = None, category: str = "t-shirts"
) -> Product:
    at = iso(EARLIER)
    return Product(
        product_id=product_id,
        name=product_id.title(),
        description="",
        category=category,
        price=price or euros(1999),
        available=available,
        created_at=at,
        updated_at=at,
        version=1,
    )


def order(
    lines: Sequence[tuple[str, int, Money]],
    user_id: str = "U100",
    placed: datetime = NOW,
    status: OrderStatus = OrderStatus.PLACED,
) -> Order:
    """An order as services.place_order builds it: lines numbered from 1, total summed, version 1."""
    order_lines = tuple(
        OrderLine(line_no=n, product_id=product_id, quantity=quantity, unit_price=price)
        for n, (product_id, quantity, price) in enumerate(lines, start=1)
    )
    at = iso(placed)
    return Order(
        order_id=new_id(placed),
        user_id=user_id,
        status=status,
        placed_at=at,
        updated_at=at,
        total=Money(
            amount=sum(line.line_total.amount for line in order_lines), currency=order_lines[0].unit_price.currency
        ),
        line_count=len(order_lines),
        version=1,
        lines=order_lines,
    )


def line_of(item: Product, quantity: int = 1) -> tuple[str, int, Money]:
    """An order line for ``item`` quoting its current price."""
    return item.product_id, quantity, item.price


def key_for(user_id: str, key: str, operation: str = "place-order", body: Any = None) -> IdempotentRequest:
    return IdempotentRequest.of(user_id, key, operation, body if body is not None else {"key": key})


class Placement(NamedTuple):
    """The arguments of ``Commerce.place_order`` but the clock: ``store.place_order(*placement, NOW)``."""

    order: Order
    event: OutboxEvent
    request: IdempotentRequest


def placement(placed: Order, key: str | None = None) -> Placement:
    """How services.place_order hands ``placed`` to the store, under a key of its own unless given.

    The key's fingerprint covers the lines only, so two orders with the same lines are one retried request.
    """
    body = placed.model_dump(mode="json", include={"lines"})
    request = key_for(placed.user_id, key or f"key-{placed.order_id}", body=body)
    return Placement(placed, events.order_placed(placed), request)


def cancellation(current: Order, by: str) -> tuple[Order, Order, OutboxEvent, OrderMove]:
    """The arguments of ``Commerce.cancel_order`` for ``current``, as services.cancel_order builds them."""
    cancelled = current.model_copy(
        update={"status": OrderStatus.CANCELLED, "updated_at": iso(NOW), "version": current.version + 1}
    )
    move = OrderMove.of(current.status, cancelled, by, "cancelled by its owner")
    return current, cancelled, events.order_cancelled(cancelled, by), move
