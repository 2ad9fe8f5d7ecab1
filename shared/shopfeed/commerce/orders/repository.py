"""CommerceTable: the DynamoDB calls of orders, on the platform's table gateway.

Returns domain models, never raw items; turns failed conditions and cancelled transactions into
domain errors right here, reading the reasons by label; owns the pagination cursors of its lists.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr

from shopfeed.commerce import items, keys
from shopfeed.commerce.catalog.repository import CatalogRepository
from shopfeed.commerce.errors import (
    InsufficientStock,
    PaymentInProgress,
    PriceChange,
    PriceChanged,
    StockShortage,
    UnknownProducts,
)
from shopfeed.commerce.models import (
    Order,
    OrderLine,
    OrderStatus,
    OrderSummary,
)
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.dynamo import BASE_TABLE, Transaction, Update
from shopfeed.platform.errors import NotFound, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest, Snapshot
from shopfeed.platform.models import Page
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.pagination import Source, merged_page, query_page

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

# Transaction labels: cancellation reasons are read by these, never by position.
_KEY = "idempotency-key"

# What a key record keeps of the value it created. Bump a version (with an upgrade of the older
# JSON) when a model gains a required field; see platform.idempotency.Snapshot.
ORDER_SNAPSHOT = Snapshot(Order, version=1)
_STOCK = "stock:"
_PURCHASE = "purchase:"


class CommerceRepository(CatalogRepository):
    """The catalog's repository plus orders. Orders extend the catalog's rather than
    standing beside it: placing and cancelling an order move product stock inside the order's own
    TransactWriteItems (header, lines, stock, outbox event, key record), so one gateway writes both."""

    # -- orders ------------------------------------------------------------------------------

    def place_order(
        self,
        order: Order,
        event: OutboxEvent,
        request: IdempotentRequest,
        now: datetime,
        also: Sequence[tuple[str, "TransactWriteItemTypeDef"]] = (),
    ) -> Created[Order]:
        """One TransactWriteItems: header, lines, guarded stock decrements, outbox event, key record,
        and the labelled items of ``also`` (a checkout empties the cart in it).

        A retry with the same key is answered from the key record returned in CancellationReasons; a
        cancellation for none of the order's own reasons is raised as is, for the caller's labels.
        """
        transaction = Transaction()
        transaction.add("order", self._table.put_op(items.order_item(order), if_absent=True))
        for line in order.lines:
            transaction.add(f"line:{line.line_no}", self._table.put_op(items.order_line_item(order, line)))
        for line in order.lines:
            transaction.add(_STOCK + line.product_id, self._decrement_stock(line))
        transaction.add("event", self._table.put_op(items.outbox_item(event), if_absent=True))
        transaction.add(_KEY, idempotency.record_put(self._table.name, request, ORDER_SNAPSHOT, order, now))
        for label, op in also:
            transaction.add(label, op)
        try:
            self._table.transact(transaction, busy="stock of the ordered products")
        except dynamo.TransactionCancelled as cancelled:
            replayed = idempotency.replay(request, cancelled.reason(_KEY), ORDER_SNAPSHOT)
            if replayed:
                return replayed
            _raise_stock_problems(order.lines, cancelled)
            raise
        return Created(order)

    def _decrement_stock(self, line: OrderLine) -> "TransactWriteItemTypeDef":
        # Price is part of the condition: the order is charged exactly what the client quoted, and a
        # concurrent price change cancels it instead of being read and written in two steps.
        condition = (
            Attr("PK").exists()
            & Attr("available").gte(line.quantity)
            & Attr("price.amount").eq(line.unit_price.amount)
            & Attr("price.currency").eq(line.unit_price.currency)
        )
        return self._table.update_op(
            keys.product(line.product_id),
            Update(add={"available": -line.quantity}),
            condition=condition,
            return_old_on_failure=True,
        )

    def get_order(self, order_id: str) -> Order | None:
        return read_order(self._table, order_id)

    def list_order_lines(self, order_id: str, owner: str | None, limit: int, cursor: str | None) -> Page[OrderLine]:
        """Lines in order. With ``owner``, lines of someone else's order are filtered out in the same
        Query, so the caller is authorised without reading the header first."""
        found, next_cursor = query_page(
            self._table,
            self._cursors,
            f"order-lines:{order_id}:{owner or '*'}",
            BASE_TABLE,
            keys.order_partition(order_id),
            limit,
            cursor,
            where=lambda sk: sk.begins_with(keys.LINE),
            filter=Attr("user_id").eq(owner) if owner is not None else None,
        )
        return Page(items=[items.order_line_from(i) for i in found], next_cursor=next_cursor)

    def list_orders_of_user(self, user_id: str, limit: int, cursor: str | None) -> Page[OrderSummary]:
        found, next_cursor = query_page(
            self._table,
            self._cursors,
            f"orders-by-user:{user_id}",
            keys.ORDERS_BY_USER,
            keys.user_orders_partition(user_id),
            limit,
            cursor,
            forward=False,
        )
        return Page(items=[items.order_summary_from(i) for i in found], next_cursor=next_cursor)

    def list_orders_by_status(
        self, status: OrderStatus, month: str, limit: int, cursor: str | None
    ) -> Page[OrderSummary]:
        """Scatter-gather over the write shards of one status and month, merged newest first."""
        shards = [
            Source(keys.ORDERS_BY_STATUS, keys.status_partition(status, month, shard))
            for shard in range(keys.ORDER_STATUS_SHARDS)
        ]
        found, next_cursor = merged_page(
            self._table, self._cursors, f"orders-by-status:{status}:{month}", shards, limit, cursor
        )
        return Page(items=[items.order_summary_from(i) for i in found], next_cursor=next_cursor)

    def cancel_order(self, order: Order, cancelled: Order, event: OutboxEvent) -> None:
        """Guarded transition (version and state), restock every line, outbox event: one transaction."""
        # An update, not a Put of the whole order: attributes other writers add to the order (payment,
        # shipment) survive the cancel.
        moved = dynamo.reindexed(
            keys.INDEXES,
            items.order_item(cancelled),
            Update(
                set={
                    "status": cancelled.status.value,
                    "version": cancelled.version,
                    "updated_at": cancelled.updated_at,
                }
            ),
        )
        # A payment in flight blocks the cancel, so an approval never lands on a cancelled order.
        guard = (
            Attr("version").eq(order.version)
            & Attr("status").eq(order.status.value)
            & Attr(items.PAYMENT_PENDING).not_exists()
        )
        transaction = Transaction()
        transaction.add(
            "order",
            self._table.update_op(keys.order(order.order_id), moved, condition=guard, return_old_on_failure=True),
        )
        for line in order.lines:
            transaction.add(
                _STOCK + line.product_id,
                self._table.update_op(keys.product(line.product_id), Update(add={"available": line.quantity})),
            )
            if order.status is OrderStatus.PAID:
                # The payment's proof of purchase is taken back with the order (reviews check it).
                proof = items.purchase_change(order.user_id, line.product_id, -1)
                transaction.add(_PURCHASE + line.product_id, self._table.update_op(*proof))
        transaction.add("event", self._table.put_op(items.outbox_item(event), if_absent=True))
        try:
            # attempts=1: services.cancel_order re-reads and retries, the one retry layer of a cancel.
            self._table.transact(transaction, busy=f"order {order.order_id}", attempts=1)
        except dynamo.TransactionCancelled as error:
            current = error.reason("order")
            if not current.failed_condition:
                raise
            if current.item is None:
                raise NotFound("order", order.order_id) from error
            if items.PAYMENT_PENDING in current.item:
                raise PaymentInProgress(order.order_id, str(current.item[items.PAYMENT_PENDING])) from error
            raise StaleVersion("order", order.order_id, int(current.item["version"])) from error


def read_order(table: dynamo.Table, order_id: str) -> Order | None:
    """Header and lines in one strongly consistent Query: LINE# sorts before META (payment attempts and
    shipments, after META in the same partition, are not read)."""
    response = table.query(
        BASE_TABLE,
        keys.order_partition(order_id),
        where=lambda sk: sk.between(keys.LINE, keys.META),
        consistent=True,
    )
    found = [dynamo.deserialize(i) for i in response["Items"]]
    header = [i for i in found if i["SK"] == keys.META]
    if not header:
        return None
    return items.order_from(header[0], [i for i in found if i["SK"] != keys.META])


def _raise_stock_problems(lines: tuple[OrderLine, ...], cancelled: dynamo.TransactionCancelled) -> None:
    unknown, short, repriced = [], [], []
    for line in lines:
        reason = cancelled.reason(_STOCK + line.product_id)
        if not reason.failed_condition:
            continue
        if reason.item is None:
            unknown.append(line.product_id)
            continue
        product = items.product_from(reason.item)
        if product.available < line.quantity:
            short.append(StockShortage(line.product_id, line.quantity, product.available))
        if product.price != line.unit_price:
            repriced.append(PriceChange(line.product_id, line.unit_price.model_dump(), product.price.model_dump()))
    if unknown:
        raise UnknownProducts(unknown)
    if short:
        raise InsufficientStock(short)
    if repriced:
        raise PriceChanged(repriced)
