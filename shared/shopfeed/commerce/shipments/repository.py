"""CommerceTable calls of shipments: shipment items in their order's partition, moved together with the
order and their outbox events; the two shipment lists (ECOM-008, ECOM-010).

As ``commerce.orders.repository``: domain models out, failed conditions turned into domain errors here (read
by transaction label).
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from boto3.dynamodb.conditions import Attr

from shopfeed.commerce import items, keys
from shopfeed.commerce.errors import OrderChanged, OrderNotShippable
from shopfeed.commerce.models import Order, OrderMove, OrderStatus, Shipment, ShipmentStatus
from shopfeed.commerce.orders.repository import HISTORY, history_op, read_order
from shopfeed.commerce.payments import refunds
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.dynamo import Transaction, Update
from shopfeed.platform.errors import NotFound, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest, Snapshot
from shopfeed.platform.models import Page
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.pagination import Reader, Source

# Transaction labels: cancellation reasons are read by these, never by position.
_SHIPMENT: Final = "shipment"
_ORDER: Final = "order"
_EVENT: Final = "event:"

SHIPMENT_SNAPSHOT: Final = Snapshot(Shipment, version=1)


class ShipmentRepository:
    """Shipments: created for paid orders, moved along their state machine with their order."""

    def __init__(self, table: dynamo.Table) -> None:
        self._table = table

    def get_order(self, order_id: str) -> Order | None:
        """The order with its lines (one strongly consistent Query)."""
        return read_order(self._table, order_id)

    def create(self, shipment: Shipment, request: IdempotentRequest, now: datetime) -> Created[Shipment]:
        """One TransactWriteItems: the shipment, a check that its order is Paid, the key record. A retry
        is answered from the key record (checked first) whatever the order became since."""
        paid = Attr(dynamo.PARTITION).exists() & Attr("status").eq(OrderStatus.PAID.value)
        transaction = Transaction()
        transaction.add(_SHIPMENT, self._table.put_op(items.shipment_item(shipment), if_absent=True))
        transaction.add(_ORDER, self._table.check_op(keys.order(shipment.order_id), paid))
        busy = f"order {shipment.order_id}"
        try:
            return idempotency.commit(self._table, transaction, request, SHIPMENT_SNAPSHOT, shipment, now, busy)
        except dynamo.TransactionCancelled as cancelled:
            order = cancelled.reason(_ORDER)
            if order.failed_condition and order.item is None:
                raise NotFound("order", shipment.order_id) from cancelled
            if order.failed_condition and order.item is not None:
                raise OrderNotShippable(shipment.order_id, str(order.item["status"])) from cancelled
            raise

    def get_with_order(self, order_id: str, shipment_id: str) -> tuple[Order | None, Shipment | None]:
        """The order's header and the shipment, in one strongly consistent BatchGetItem."""
        found = self._table.get_many([keys.order(order_id), keys.shipment(order_id, shipment_id)])
        header = next((i for i in found if i[dynamo.SORT] == keys.META), None)
        shipment = next((i for i in found if i[dynamo.SORT] != keys.META), None)
        return (
            items.order_from(header) if header else None,
            items.shipment_from(shipment) if shipment else None,
        )

    def get(self, order_id: str, shipment_id: str) -> Shipment | None:
        item = self._table.get(keys.shipment(order_id, shipment_id))
        return items.shipment_from(item) if item else None

    def move(
        self,
        shipment: Shipment,
        moved: Shipment,
        order: Order,
        order_move: OrderMove | None,
        events: Sequence[OutboxEvent],
        refund_id: str | None = None,
    ) -> None:
        """One TransactWriteItems: the shipment at its next status (if still at the version read), the
        order moved with it (and the move in its history) or checked unchanged (if at the version read),
        and the events. With ``refund_id`` (the order moves to Returned) the order's authorized attempt
        is read (one Query) and the refund of its payment starts in the same transaction
        (``payments.refunds``).

        Raises StaleVersion (the shipment changed: the client reads it again), OrderChanged (the
        order changed: the service reads again and decides again)."""
        change = {"status": moved.status.value, "updated_at": moved.updated_at, "version": moved.version}
        if moved.tracking_number is not None:
            change["tracking_number"] = moved.tracking_number
        # Both list keys move with it: they sort by ``updated_at``.
        shipment_move = dynamo.reindexed(keys.INDEXES, items.shipment_item(moved), Update(set=change))
        unchanged = Attr("version").eq(shipment.version)
        order_unchanged = Attr("version").eq(order.version) & Attr("status").eq(order.status.value)
        transaction = Transaction()
        transaction.add(
            _SHIPMENT,
            self._table.update_op(
                keys.shipment(shipment.order_id, shipment.shipment_id),
                shipment_move,
                condition=Attr(dynamo.PARTITION).exists() & unchanged,
                return_old_on_failure=True,
            ),
        )
        order_key = keys.order(order.order_id)
        if order_move is None:
            transaction.add(_ORDER, self._table.check_op(order_key, order_unchanged))
        else:
            move = _order_move(order, order_move, refund_id)
            transaction.add(_ORDER, self._table.update_op(order_key, move, order_unchanged))
            transaction.add(HISTORY, history_op(self._table, order_move))
        for event in events:
            transaction.add(_EVENT + event.event_id, self._table.put_op(items.outbox_item(event), if_absent=True))
        paid = refunds.paid_with(self._table, order.order_id) if refund_id is not None else None
        if paid is not None and order_move is not None and refund_id is not None:
            if paid.attempt is None:
                raise RuntimeError(f"order {order.order_id} was shipped with no authorized payment")
            refund = refunds.new_refund(paid.attempt, refund_id, OrderStatus.RETURNED, order_move.at)
            refunds.add_refund_start(self._table, transaction, paid.attempt, refund)
        try:
            # attempts=1: services.update_shipment re-reads and retries, the one retry layer.
            self._table.transact(transaction, busy=f"order {order.order_id}", attempts=1)
        except dynamo.TransactionCancelled as cancelled:
            current = cancelled.reason(_SHIPMENT)
            if current.failed_condition and current.item is None:
                raise NotFound("shipment", shipment.shipment_id) from cancelled
            if current.failed_condition and current.item is not None:
                raise StaleVersion("shipment", shipment.shipment_id, int(current.item["version"])) from cancelled
            if cancelled.failed(_ORDER):
                raise OrderChanged(order.order_id) from cancelled
            if paid is not None and paid.attempt is not None:
                refunds.raise_refund_refused(paid.attempt, cancelled)
            raise


def _order_move(order: Order, move: OrderMove, refund_id: str | None) -> Update:
    """The order's new status, and its place in OrdersByStatus with it (and its refund in flight)."""
    moved = order.model_copy(update={"status": move.to_status, "updated_at": move.at, "version": move.version})
    change = {"status": moved.status.value, "updated_at": moved.updated_at, "version": moved.version}
    if refund_id is not None:
        change[items.REFUND_PENDING] = refund_id
    return dynamo.reindexed(keys.INDEXES, items.order_item(moved), Update(set=change))


class ShipmentQueries:
    """The shipment lists: ECOM-008 (an order's shipments) and ECOM-010 (the ops dashboard)."""

    def __init__(self, table: dynamo.Table, cursors: CursorCodec) -> None:
        self._pages = Reader(table, cursors)

    def list_for_order(self, order_id: str, owner: str | None, limit: int, cursor: str | None) -> Page[Shipment]:
        """ECOM-008: one Query on ShipmentsByOrder, newest update first. With ``owner``, someone else's
        shipments are filtered out in the same Query."""
        source = Source(keys.SHIPMENTS_BY_ORDER, keys.order_partition(order_id))
        return self._pages.page_of(
            items.shipment_from,
            f"order-shipments:{order_id}:{owner or '*'}",
            source,
            limit,
            cursor,
            filter=Attr("user_id").eq(owner) if owner is not None else None,
            forward=False,
        )

    def list_by_status(
        self, status: ShipmentStatus, carrier: str, month: str, limit: int, cursor: str | None
    ) -> Page[Shipment]:
        """ECOM-010: one Query on ShipmentsByStatus (status, carrier and month of the last update),
        newest update first."""
        source = Source(keys.SHIPMENTS_BY_STATUS, keys.shipments_partition(status, carrier, month))
        return self._pages.page_of(
            items.shipment_from, f"shipments:{status}:{carrier}:{month}", source, limit, cursor, forward=False
        )
