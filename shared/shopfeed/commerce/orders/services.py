"""Use cases of orders. No HTTP, no stream records: callers pass plain values in."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from shopfeed.commerce import events
from shopfeed.commerce.catalog.services import Catalog
from shopfeed.commerce.models import (
    Order,
    OrderLine,
    OrderMove,
    OrderStatus,
    OrderSummary,
)
from shopfeed.platform.clock import iso, new_id, utc_now
from shopfeed.platform.errors import Contention, InvalidRequest, InvalidTransition, NotFound, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.identity import OPS, Caller
from shopfeed.platform.models import Page
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.types import MAX_AMOUNT, Money


class Commerce(Catalog, Protocol):
    """The storage port of this context (CommerceRepository, or an in-memory fake in unit tests).

    It extends the catalog's port rather than standing beside it: placing and cancelling an order
    move product stock in the order's own transaction, so one store serves both aggregates."""

    def place_order(self, order: Order, event: OutboxEvent, request: IdempotentRequest, now: Any) -> Created[Order]: ...
    def get_order(self, order_id: str) -> Order | None: ...
    def list_order_lines(self, order_id: str, owner: str | None, limit: int, cursor: str | None) -> Page[OrderLine]: ...
    def list_orders_of_user(self, user_id: str, limit: int, cursor: str | None) -> Page[OrderSummary]: ...
    def list_orders_by_status(
        self, status: OrderStatus, month: str, limit: int, cursor: str | None
    ) -> Page[OrderSummary]: ...
    def cancel_order(
        self, order: Order, cancelled: Order, event: OutboxEvent, move: OrderMove, refund_id: str | None = None
    ) -> None: ...
    def list_order_history(
        self, order_id: str, owner: str | None, limit: int, cursor: str | None
    ) -> Page[OrderMove]: ...


# -- orders -----------------------------------------------------------------------------------


def place_order(
    store: Commerce, caller: Caller, request: IdempotentRequest, lines: Sequence[tuple[str, int, Money]]
) -> Created[Order]:
    """Order ``(product_id, quantity, quoted unit price)`` lines; a retry answers the order the key placed."""
    moment = utc_now()
    order = new_order(caller, lines, moment)
    return store.place_order(order, events.order_placed(order), request, moment)


def new_order(caller: Caller, lines: Sequence[tuple[str, int, Money]], moment: datetime) -> Order:
    """The order ``lines`` make, checked, as placing it writes it (a cart's checkout places one too)."""
    product_ids = [product_id for product_id, _, _ in lines]
    if len(set(product_ids)) != len(product_ids):
        # One transaction cannot touch the same product twice; merging silently could hide a client bug.
        raise InvalidRequest("Each product may appear on one line only; put the total quantity on it.")
    currencies = {price.currency for _, _, price in lines}
    if len(currencies) != 1:
        raise InvalidRequest("All lines of an order must be priced in the same currency.")

    total = sum(quantity * price.amount for _, quantity, price in lines)
    if total > MAX_AMOUNT:
        raise InvalidRequest(f"The order total exceeds {MAX_AMOUNT} minor units.")

    now = iso(moment)
    order_lines = tuple(
        OrderLine(line_no=n, product_id=product_id, quantity=quantity, unit_price=price)
        for n, (product_id, quantity, price) in enumerate(lines, start=1)
    )
    return Order(
        order_id=new_id(moment),
        user_id=caller.user_id,
        status=OrderStatus.PLACED,
        placed_at=now,
        updated_at=now,
        total=Money(amount=total, currency=currencies.pop()),
        line_count=len(order_lines),
        version=1,
        lines=order_lines,
    )


def _visible_order(store: Commerce, caller: Caller, order_id: str) -> Order:
    order = store.get_order(order_id)
    # Someone else's order answers exactly like a missing one: its existence is private.
    if order is None or not (order.user_id == caller.user_id or caller.is_ops):
        raise NotFound("order", order_id)
    return order


def read_order(store: Commerce, caller: Caller, order_id: str) -> Order:
    return _visible_order(store, caller, order_id)


def list_order_lines(store: Commerce, caller: Caller, order_id: str, limit: int, cursor: str | None) -> Page[OrderLine]:
    page = store.list_order_lines(order_id, None if caller.is_ops else caller.user_id, limit, cursor)
    if not page.items and cursor is None:
        raise NotFound("order", order_id)  # every order has at least one line
    return page


def list_order_history(
    store: Commerce, caller: Caller, order_id: str, limit: int, cursor: str | None
) -> Page[OrderMove]:
    """HISTORY, oldest first: the owner's or, for ops, anyone's. An empty first page reads the order to
    tell an order placed before history was kept (an empty list) from one the caller may not see (404)."""
    page = store.list_order_history(order_id, None if caller.is_ops else caller.user_id, limit, cursor)
    if not page.items and cursor is None:
        _visible_order(store, caller, order_id)
    return page


def list_my_orders(store: Commerce, caller: Caller, limit: int, cursor: str | None) -> Page[OrderSummary]:
    return store.list_orders_of_user(caller.user_id, limit, cursor)


def list_orders_by_status(
    store: Commerce, caller: Caller, status: OrderStatus, month: str, limit: int, cursor: str | None
) -> Page[OrderSummary]:
    caller.require(OPS, "list orders by status")
    return store.list_orders_by_status(status, month, limit, cursor)


def cancel_order(store: Commerce, caller: Caller, order_id: str, attempts: int = 5) -> tuple[Order, bool]:
    """Cancel and restock; answers the order and whether this call cancelled it. A Paid order (not
    shipped: its first parcel shipped moves it on) starts the refund of its payment in the same
    transaction, and its parcels not shipped yet are cancelled with it.

    Cancelling a cancelled order is a no-op that answers the order (a retried request must not restock
    twice). A concurrent change of the order (stale version, or a transaction in flight on it) is
    re-read and retried here, the only retry layer: the repository tries its transaction once."""
    for attempt in range(1, attempts + 1):
        order = _visible_order(store, caller, order_id)
        if order.status is OrderStatus.CANCELLED:
            return order, False
        if not order.status.can_become(OrderStatus.CANCELLED):
            raise InvalidTransition("order", order_id, order.status, OrderStatus.CANCELLED)
        cancelled = order.model_copy(
            update={"status": OrderStatus.CANCELLED, "updated_at": iso(utc_now()), "version": order.version + 1}
        )
        refund_id = new_id() if order.status is OrderStatus.PAID else None
        why = "cancelled by its owner" if caller.user_id == order.user_id else "cancelled by ops"
        if refund_id is not None:
            why += f"; refund {refund_id} started"
        move = OrderMove.of(order.status, cancelled, caller.user_id, why)
        try:
            store.cancel_order(order, cancelled, events.order_cancelled(cancelled, caller.user_id), move, refund_id)
        except (StaleVersion, Contention):
            if attempt == attempts:
                raise  # a 412 names the version stored now; a 409 says retry
            continue
        return cancelled, True
    raise ValueError("attempts must be at least 1")
