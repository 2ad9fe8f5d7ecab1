"""Use cases of shipments: ops create them for paid orders and move them along their state machine;
the order moves with them where its own state machine admits it. No HTTP: callers pass values in."""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from shopfeed.commerce import events
from shopfeed.commerce.errors import OrderChanged, OrderNotShippable
from shopfeed.commerce.models import Order, OrderMove, OrderStatus, Shipment, ShipmentStatus
from shopfeed.platform.clock import iso, new_id, utc_now
from shopfeed.platform.errors import Contention, InvalidTransition, NotFound, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.identity import OPS, Caller
from shopfeed.platform.models import Page
from shopfeed.platform.outbox import OutboxEvent


class Shipments(Protocol):
    """The write side of shipments and the orders it reads (ShipmentRepository)."""

    def get_order(self, order_id: str) -> Order | None: ...
    def create(self, shipment: Shipment, request: IdempotentRequest, now: datetime) -> Created[Shipment]: ...
    def get(self, order_id: str, shipment_id: str) -> Shipment | None: ...
    def get_with_order(self, order_id: str, shipment_id: str) -> tuple[Order | None, Shipment | None]: ...
    def move(
        self,
        shipment: Shipment,
        moved: Shipment,
        order: Order,
        order_move: OrderMove | None,
        events: Sequence[OutboxEvent],
        refund_id: str | None = None,
    ) -> None: ...


class ShipmentLists(Protocol):
    """The shipment lists (ShipmentQueries)."""

    def list_for_order(self, order_id: str, owner: str | None, limit: int, cursor: str | None) -> Page[Shipment]: ...
    def list_by_status(
        self, status: ShipmentStatus, carrier: str, month: str, limit: int, cursor: str | None
    ) -> Page[Shipment]: ...


def _visible(order: Order | None, caller: Caller) -> bool:
    return order is not None and (order.user_id == caller.user_id or caller.is_ops)


def create_shipment(
    store: Shipments,
    caller: Caller,
    request: IdempotentRequest,
    order_id: str,
    carrier: str,
    tracking_number: str | None,
) -> Created[Shipment]:
    """A new parcel of a paid order (ops). Two round trips: the order is read (the shipment carries its
    owner, for owner-only reads), then one transaction writes it if the order is still Paid."""
    caller.require(OPS, "ship orders")
    order = store.get_order(order_id)
    if order is None:
        raise NotFound("order", order_id)
    moment = utc_now()
    now = iso(moment)
    shipment = Shipment(
        shipment_id=new_id(moment),
        order_id=order_id,
        user_id=order.user_id,
        carrier=carrier,
        tracking_number=tracking_number,
        status=ShipmentStatus.CREATED,
        created_at=now,
        updated_at=now,
        version=1,
    )
    return store.create(shipment, request, moment)


def read_shipment(store: Shipments, caller: Caller, order_id: str, shipment_id: str) -> Shipment:
    shipment = store.get(order_id, shipment_id)
    if shipment is None or not (shipment.user_id == caller.user_id or caller.is_ops):
        raise NotFound("shipment", shipment_id)
    return shipment


def update_shipment(
    store: Shipments,
    caller: Caller,
    order_id: str,
    shipment_id: str,
    expected_version: int,
    status: ShipmentStatus,
    tracking_number: str | None,
    attempts: int = 5,
) -> Shipment:
    """Move a shipment (ops, If-Match) and its order with it when the order's state machine admits the
    move (Shipped: Paid → Shipped; Delivered: Shipped → Delivered; Returned: Shipped or Delivered →
    Returned, which starts the refund of the order's payment); otherwise the order is left as it is
    (a second parcel of a shipped order). A cancelled order's parcel is not shipped. The order
    changing meanwhile (another parcel), or a transaction in flight on it, is read again and decided
    again here, the only retry layer."""
    caller.require(OPS, "update shipments")
    for attempt in range(1, attempts + 1):
        order, shipment = store.get_with_order(order_id, shipment_id)
        if order is None or shipment is None:
            raise NotFound("shipment", shipment_id)
        if shipment.version != expected_version:
            raise StaleVersion("shipment", shipment_id, shipment.version)
        # First: a cancelled order's parcel (Cancelled with it) is answered by why it never ships.
        if status is ShipmentStatus.SHIPPED and order.status in (OrderStatus.CANCELLED, OrderStatus.REFUNDED):
            raise OrderNotShippable(order_id, order.status.value)
        if not shipment.status.can_become(status):
            raise InvalidTransition("shipment", shipment_id, shipment.status, status)
        now = iso(utc_now())
        moved = shipment.model_copy(
            update={
                "status": status,
                "updated_at": now,
                "version": shipment.version + 1,
                "tracking_number": tracking_number or shipment.tracking_number,
            }
        )
        order_moved = _order_after(order, status, now)
        made = [events.shipment_status_changed(moved, shipment.status)]
        order_move = None
        # A return gives the payment back: the refund starts in the move's own transaction.
        refund_id = new_id() if order_moved is not None and order_moved.status is OrderStatus.RETURNED else None
        if order_moved is not None:
            made.append(events.order_status_changed(order_moved, order.status, shipment_id))
            why = f"shipment {shipment_id} {status.value.lower()}"
            if refund_id is not None:
                why += f"; refund {refund_id} started"
            order_move = OrderMove.of(order.status, order_moved, caller.user_id, why)
        try:
            store.move(shipment, moved, order, order_move, made, refund_id)
        except (OrderChanged, Contention):
            if attempt == attempts:
                raise Contention(f"order {order_id}") from None
            continue
        return moved
    raise ValueError("attempts must be at least 1")


def _order_after(order: Order, status: ShipmentStatus, now: str) -> Order | None:
    target = status.order_status
    if target is None or not order.status.can_become(target):
        return None
    return order.model_copy(update={"status": target, "updated_at": now, "version": order.version + 1})


def list_order_shipments(
    store: Shipments, lists: ShipmentLists, caller: Caller, order_id: str, limit: int, cursor: str | None
) -> Page[Shipment]:
    """ECOM-008, newest update first: the owner's or, for ops, anyone's. An empty first page reads the
    order to tell "not shipped yet" from an order the caller may not see (404)."""
    page = lists.list_for_order(order_id, None if caller.is_ops else caller.user_id, limit, cursor)
    if not page.items and cursor is None and not _visible(store.get_order(order_id), caller):
        raise NotFound("order", order_id)
    return page


def list_shipments(
    lists: ShipmentLists,
    caller: Caller,
    status: ShipmentStatus,
    carrier: str,
    month: str,
    limit: int,
    cursor: str | None,
) -> Page[Shipment]:
    """ECOM-010 (ops): the shipments of one status and carrier last updated in ``month``."""
    caller.require(OPS, "list shipments")
    return lists.list_by_status(status, carrier, month, limit, cursor)
