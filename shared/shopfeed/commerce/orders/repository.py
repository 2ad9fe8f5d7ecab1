"""CommerceTable: the DynamoDB calls of orders, on the platform's table gateway.

Returns domain models, never raw items; turns failed conditions and cancelled transactions into
domain errors right here, reading the reasons by label; owns the pagination cursors of its lists.
"""

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from boto3.dynamodb.conditions import Attr

from shopfeed.commerce import items, keys
from shopfeed.commerce.catalog.repository import CatalogRepository
from shopfeed.commerce.errors import (
    InsufficientStock,
    PaymentInProgress,
    PriceChange,
    PriceChanged,
    StockScattered,
    StockShortage,
    UnknownProducts,
)
from shopfeed.commerce.inventory.stock import BUCKET, LineStock, StockRepository, bucket_label, take_op
from shopfeed.commerce.models import (
    BucketRef,
    Order,
    OrderLine,
    OrderMove,
    OrderStatus,
    OrderSummary,
)
from shopfeed.commerce.payments import refunds
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.dynamo import BASE_TABLE, Transaction, Update
from shopfeed.platform.errors import Contention, NotFound, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest, Snapshot
from shopfeed.platform.models import Page
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.pagination import Reader, Source
from shopfeed.platform.types import Money

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

# Transaction labels: cancellation reasons are read by these, never by position.
HISTORY: Final = "history"
_ORDER: Final = "order:"
_EVENT: Final = "event:"

# One index page per shard and Query: a KEYS_ONLY entry is ~100 bytes.
UNPAID_PAGE: Final = 100

# What a key record keeps of the value it created. Bump a version (with an upgrade of the older
# JSON) when a model gains a required field; see platform.idempotency.Snapshot.
ORDER_SNAPSHOT = Snapshot(Order, version=1)
_STOCK = "stock:"
# An order's tries at taking its lines from stock buckets (each may read every bucket of a product).
PLACE_ATTEMPTS: Final = 8
_PURCHASE = "purchase:"


def history_op(table: dynamo.Table, move: OrderMove) -> "TransactWriteItemTypeDef":
    """The status-history item of ``move``, for the transaction that makes the move: every repository
    that moves an order adds ``transaction.add(HISTORY, history_op(self._table, move))``, so the move
    and its record commit together or not at all. Put only if absent: a version recorded twice (a
    writer holding a stale order) cancels the move instead of rewriting history."""
    return table.put_op(items.order_history_item(move), if_absent=True)


def owned_in_order[T](
    pages: Reader,
    convert: Callable[[dynamo.Item], T],
    scope: str,
    prefix: str,
    order_id: str,
    owner: str | None,
    limit: int,
    cursor: str | None,
    *,
    forward: bool = True,
    consistent: bool = False,
) -> Page[T]:
    """A page of the order partition's items under ``prefix``, in key order (``forward``); with ``owner``
    only that user's (a filter: the caller is authorised by the same Query)."""
    return pages.page_of(
        convert,
        f"{scope}:{order_id}:{owner or '*'}",
        Source(BASE_TABLE, keys.order_partition(order_id)),
        limit,
        cursor,
        where=lambda sk: sk.begins_with(prefix),
        filter=Attr("user_id").eq(owner) if owner is not None else None,
        forward=forward,
        consistent=consistent,
    )


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
        """One TransactWriteItems: header, lines, a guarded take from stock buckets per line, outbox
        event, key record, and the labelled items of ``also`` (a checkout empties the cart in it).

        A take that finds its bucket short or held by a concurrent transaction is not the end: the
        order is sent again with that line on other buckets, a bounded number of times (decision 156);
        only when one strong read of every bucket shows too few units in all is it InsufficientStock.
        A retry with the same key is answered from the key record returned in CancellationReasons; a
        cancellation for none of the order's own reasons is raised as is, for the caller's labels.
        """
        choices = self._stock_of(order)
        for attempt in range(PLACE_ATTEMPTS):
            placed = self._with_takes(order, choices, len(also))
            transaction = self._placement(placed, event, request, now, also)
            try:
                self._table.transact_once(transaction)
            except dynamo.TransactionCancelled as cancelled:
                replayed = idempotency.replay(request, cancelled.reason(idempotency.KEY), ORDER_SNAPSHOT)
                if replayed:
                    return replayed
                if not self._learn(placed, cancelled, choices):
                    raise
                if attempt:
                    # Every bucket tried may be busy: spread the next try (full jitter, 5 ms doubling).
                    time.sleep(random.uniform(0, 0.005 * 2**attempt))
                continue
            return Created(placed)
        raise Contention("stock of the ordered products")

    def _stock_of(self, order: Order) -> dict[str, LineStock]:
        """The ordered products' layouts, as the container keeps them (``StockRepository.recent_layouts``:
        a stale layout costs a retry, never a unit, since every take is guarded by its bucket)."""
        product_ids = [line.product_id for line in order.lines]
        layouts = self.stock.recent_layouts(product_ids)
        missing = [product_id for product_id in product_ids if product_id not in layouts]
        if missing:
            fresh = self.stock.layouts(missing)
            for layout in fresh.values():
                self.stock.remember(layout)
            layouts |= fresh
            _raise_unknown([p for p in missing if p not in fresh], self._table)
        return {product_id: LineStock(layouts[product_id]) for product_id in product_ids}

    def _with_takes(self, order: Order, choices: Mapping[str, LineStock], also: int) -> Order:
        """``order`` with the buckets each line takes from. Lines nothing is known enough about read
        their product's layout and every bucket of it first (two strong BatchGetItems); a refusal always
        rests on such a read made for this very try."""
        plan = {line.product_id: choices[line.product_id].choose(line.quantity) for line in order.lines}
        stale = [product_id for product_id, taken in plan.items() if not taken]
        if stale:
            # The layout too, strongly: the container's may predate a resize, and a refusal counted
            # over its buckets would miss the ones added since.
            for layout in self.stock.layouts(stale).values():
                self.stock.remember(layout)
                choices[layout.product_id].layout = layout
            levels = self.stock.levels_of_many([choices[product_id].layout for product_id in stale])
            for line in order.lines:
                if line.product_id in levels:
                    choices[line.product_id].learn_all(levels[line.product_id])
                    plan[line.product_id] = choices[line.product_id].choose(line.quantity)
        short = [
            StockShortage(line.product_id, line.quantity, choices[line.product_id].total)
            for line in order.lines
            if not plan[line.product_id]
        ]
        if short:
            raise InsufficientStock(short)
        takes = {product_id: taken or () for product_id, taken in plan.items()}
        if placement_items(order) + also + sum(len(t) for t in takes.values()) > dynamo.MAX_TRANSACTION_ITEMS:
            raise StockScattered([product_id for product_id, taken in takes.items() if len(taken) > 1])
        lines = tuple(line.model_copy(update={"takes": takes[line.product_id]}) for line in order.lines)
        return order.model_copy(update={"lines": lines})

    def _placement(
        self,
        order: Order,
        event: OutboxEvent,
        request: IdempotentRequest,
        now: datetime,
        also: Sequence[tuple[str, "TransactWriteItemTypeDef"]],
    ) -> Transaction:
        transaction = Transaction()
        transaction.add("order", self._table.put_op(items.order_item(order), if_absent=True))
        for line in order.lines:
            transaction.add(f"line:{line.line_no}", self._table.put_op(items.order_line_item(order, line)))
        for line in order.lines:
            for take in line.takes:
                label = bucket_label(line.product_id, BucketRef(warehouse=take.warehouse, bucket=take.bucket))
                transaction.add(label, take_op(self._table, line.product_id, take, line.unit_price))
        transaction.add("event", self._table.put_op(items.outbox_item(event), if_absent=True))
        transaction.add(HISTORY, history_op(self._table, OrderMove.of(None, order, order.user_id, "placed")))
        transaction.add(idempotency.KEY, idempotency.record_put(self._table.name, request, ORDER_SNAPSHOT, order, now))
        for label, op in also:
            transaction.add(label, op)
        return transaction

    def _learn(self, placed: Order, cancelled: dynamo.TransactionCancelled, choices: Mapping[str, LineStock]) -> bool:
        """What a cancelled placement says of the buckets it took from: a short bucket's level (its old
        item), a busy one to avoid next, a gone one (a resize) a layout to read again. False when
        something else refused the transaction (the caller's labels, a condition of its own): raise it.
        A bucket whose price is not the quoted one refuses the order (PriceChanged)."""
        labels: set[str] = set()
        repriced: list[PriceChange] = []
        short = False
        for line in placed.lines:
            stock = choices[line.product_id]
            for take in line.takes:
                ref = BucketRef(warehouse=take.warehouse, bucket=take.bucket)
                label = bucket_label(line.product_id, ref)
                labels.add(label)
                reason = cancelled.reason(label)
                if reason.code == "None":
                    continue
                if not reason.failed_condition:
                    stock.avoid.add(ref)  # TransactionConflict, throttled: another bucket next
                elif reason.item is None:
                    layout = self.stock.layout(line.product_id)  # a resize removed the bucket
                    self.stock.remember(layout)
                    stock.replace(layout)
                else:
                    bucket = reason.item
                    price = Money(amount=int(bucket["price"]["amount"]), currency=bucket["price"]["currency"])
                    if price != line.unit_price:
                        repriced.append(PriceChange(line.product_id, line.unit_price.model_dump(), price.model_dump()))
                    elif items.SEALED in bucket:
                        # At the quoted price but closed while a price change opens the buckets: busy.
                        stock.avoid.add(ref)
                        continue
                    # Short: a strong read of every bucket next (past 100 buckets, after a few guesses).
                    short = short or int(bucket["available"]) < take.quantity
                    stock.found_short(ref, int(bucket["available"]))
        # Short beats repriced (as it always has): a short line is read again, and refused if no bucket
        # holds it; a changed price refuses the order when every line could have been served.
        if repriced and not short:
            raise PriceChanged(repriced)
        others = {label: r for label, r in cancelled.reasons.items() if label not in labels and r.code != "None"}
        return all(r.code in dynamo.RETRYABLE_REASONS for r in others.values())

    def get_order(self, order_id: str) -> Order | None:
        return read_order(self._table, order_id)

    def list_order_lines(self, order_id: str, owner: str | None, limit: int, cursor: str | None) -> Page[OrderLine]:
        """Lines in order. With ``owner``, lines of someone else's order are filtered out in the same
        Query, so the caller is authorised without reading the header first."""
        convert = items.order_line_from
        return owned_in_order(self._pages, convert, "order-lines", keys.LINE, order_id, owner, limit, cursor)

    def list_order_history(self, order_id: str, owner: str | None, limit: int, cursor: str | None) -> Page[OrderMove]:
        """HISTORY: one strongly consistent Query of the order's partition, oldest move first. With
        ``owner``, someone else's history is filtered out in the same Query."""
        convert = items.order_move_from
        return owned_in_order(
            self._pages, convert, "order-history", keys.HISTORY, order_id, owner, limit, cursor, consistent=True
        )

    def list_orders_of_user(self, user_id: str, limit: int, cursor: str | None) -> Page[OrderSummary]:
        source = Source(keys.ORDERS_BY_USER, keys.user_orders_partition(user_id))
        return self._pages.page_of(
            items.order_summary_from, f"orders-by-user:{user_id}", source, limit, cursor, forward=False
        )

    def list_orders_by_status(
        self, status: OrderStatus, month: str, limit: int, cursor: str | None
    ) -> Page[OrderSummary]:
        """Scatter-gather over the write shards of one status and month, merged newest first."""
        shards = [
            Source(keys.ORDERS_BY_STATUS, keys.status_partition(status, month, shard))
            for shard in range(keys.ORDER_STATUS_SHARDS)
        ]
        return self._pages.merged_of(
            items.order_summary_from, f"orders-by-status:{status}:{month}", shards, limit, cursor
        )

    def cancel_order(
        self, order: Order, cancelled: Order, event: OutboxEvent, move: OrderMove, refund_id: str | None = None
    ) -> None:
        """Guarded transition (version and state), restock every line, outbox event, the move in the
        order's history: one transaction.

        A Paid order (``refund_id`` given) is read once more (its authorized attempt and Created
        parcels, one Query), and the same transaction cancels those parcels and starts the refund of
        its payment (``payments.refunds``), which the payment worker carries out."""
        paid = refunds.paid_with(self._table, order.order_id) if refund_id is not None else None
        if paid is not None and paid.attempt is None:
            # A Paid order is paid by an attempt written Authorized in the same transaction: never
            # cancel it without its refund (the money would stay taken).
            raise RuntimeError(f"paid order {order.order_id} has no authorized payment")
        # An update, not a Put of the whole order: attributes other writers add to the order (payment,
        # shipment) survive the cancel.
        change = {"status": cancelled.status.value, "version": cancelled.version, "updated_at": cancelled.updated_at}
        if refund_id is not None:
            change[items.REFUND_PENDING] = refund_id
        moved = dynamo.reindexed(keys.INDEXES, items.order_item(cancelled), Update(set=change))
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
        for label, op in self.stock.restore_ops(order.lines):
            transaction.add(label, op)
        for line in order.lines:
            if order.status is OrderStatus.PAID:
                # The payment's proof of purchase is taken back with the order (reviews check it).
                proof = items.purchase_change(order.user_id, line.product_id, -1)
                transaction.add(_PURCHASE + line.product_id, self._table.update_op(*proof))
        transaction.add("event", self._table.put_op(items.outbox_item(event), if_absent=True))
        if paid is not None and paid.attempt is not None and refund_id is not None:
            refund = refunds.new_refund(paid.attempt, refund_id, OrderStatus.CANCELLED, cancelled.updated_at)
            refunds.add_refund_start(self._table, transaction, paid.attempt, refund)
            refunds.add_parcel_cancels(self._table, transaction, paid.unshipped, cancelled.updated_at)
        transaction.add(HISTORY, history_op(self._table, move))
        try:
            # attempts=1: services.cancel_order re-reads and retries, the one retry layer of a cancel.
            self._table.transact(transaction, busy=f"order {order.order_id}", attempts=1)
        except dynamo.TransactionCancelled as error:
            current = error.reason("order")
            if not current.failed_condition:
                if error.failed_labels(refunds.PARCEL) or error.failed_labels(BUCKET):
                    # A parcel moved since it was read (its order moved with it, or will), or a resize
                    # removed a bucket the units go back to: read again.
                    raise Contention(f"order {order.order_id}") from error
                if paid is not None and paid.attempt is not None:
                    refunds.raise_refund_refused(paid.attempt, error)
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


def placement_items(order: Order) -> int:
    """The items of an order's placement besides its takes: header, lines, event, history, key record."""
    return 4 + len(order.lines)


def _raise_unknown(product_ids: Sequence[str], table: dynamo.Table) -> None:
    """Products without a stock layout: unknown, or (a product item found) not backfilled yet, whose
    orders wait for ``make backfill`` (a 409 to retry, decision 163)."""
    if not product_ids:
        return
    found = {str(i["product_id"]) for i in table.get_many([keys.product(p) for p in product_ids], ("product_id",))}
    unknown = [p for p in product_ids if p not in found]
    if unknown:
        raise UnknownProducts(unknown)
    raise Contention(f"stock of {', '.join(product_ids)} (moving to stock buckets)")


class Expiry(StrEnum):
    """What became of one unpaid order the payment-window sweeper tried to expire."""

    EXPIRED = "expired"
    PAYING = "paying"  # a payment is in flight: never expired under it (a decline leaves it for the next sweep)
    MOVED = "moved"  # it left Placed (paid, cancelled, expired by a rival sweep) or is gone
    BUSY = "busy"  # its transaction kept meeting concurrent writes (an overlapping sweep): the next sweep


@dataclass(frozen=True)
class Expiring:
    """One order as the sweep expires it: as read, as it will be, its event and its move."""

    order: Order
    expired: Order
    event: OutboxEvent
    move: OrderMove

    @property
    def items(self) -> int:
        """The transaction items it takes (header, event, history, one per bucket it restocks at most)."""
        return 3 + sum(max(1, len(line.takes)) for line in self.order.lines)


class ExpiryRepository:
    """CommerceTable as the payment-window sweeper sees it: the sparse UnpaidOrders index, the order
    (strong), and the guarded expiry transaction."""

    def __init__(self, table: dynamo.Table) -> None:
        self._table = table
        self._stock = StockRepository(table)

    def placed_before(self, cutoff: str, shard: int) -> Iterator[tuple[str, str]]:
        """``(placed_at, order_id)`` of the unpaid orders of one write shard placed before ``cutoff``
        (ISO-8601 UTC), oldest first, an index page of ``UNPAID_PAGE`` at a time (eventual: some may
        have moved since)."""
        index = keys.UNPAID_ORDERS
        start: Mapping[str, Any] | None = None
        while True:
            response = self._table.query(
                index,
                keys.unpaid_partition(shard),
                where=lambda sk: sk.lt(keys.placed_before(cutoff)),
                limit=UNPAID_PAGE,
                start=start,
            )
            for raw in response["Items"]:
                yield keys.placement_of(raw[index.sort_key]["S"])
            start = response.get("LastEvaluatedKey")
            if not start:
                return

    def get_order(self, order_id: str) -> Order | None:
        return read_order(self._table, order_id)

    def expire(self, expiring: Sequence[Expiring]) -> dict[str, Expiry]:
        """Expire several orders in one TransactWriteItems (``expiring_items`` of them fit): each order
        Expired if it is still Placed at the version read with no payment in flight, its event, its
        history item, and every product's restock summed. An order whose guard fails is left out and
        the rest sent again, so one paid meanwhile costs its neighbours one more round trip, never
        their expiry. Answers what became of each order."""
        outcome: dict[str, Expiry] = {}
        pending = list(expiring)
        while pending:
            try:
                self._table.transact(self._expiry(pending), busy=f"{len(pending)} orders expiring")
            except dynamo.TransactionCancelled as error:
                refused = {
                    e.order.order_id: error.reason(_ORDER + e.order.order_id)
                    for e in pending
                    if error.reason(_ORDER + e.order.order_id).failed_condition
                }
                if not refused:
                    raise
                for order_id, current in refused.items():
                    paying = current.item is not None and items.PAYMENT_PENDING in current.item
                    outcome[order_id] = Expiry.PAYING if paying else Expiry.MOVED
                pending = [e for e in pending if e.order.order_id not in refused]
                continue
            outcome.update(dict.fromkeys((e.order.order_id for e in pending), Expiry.EXPIRED))
            pending = []
        return outcome

    def _expiry(self, expiring: Sequence[Expiring]) -> Transaction:
        # The same guard as a cancel: the version read, still Placed, and no payment in flight (an
        # approval must never land on an expired order, nor an expiry on a paid one).
        transaction = Transaction()
        for e in expiring:
            order, expired = e.order, e.expired
            change = {"status": expired.status.value, "version": expired.version, "updated_at": expired.updated_at}
            moved = dynamo.reindexed(keys.INDEXES, items.order_item(expired), Update(set=change))
            guard = (
                Attr("version").eq(order.version)
                & Attr("status").eq(OrderStatus.PLACED.value)
                & Attr(items.PAYMENT_PENDING).not_exists()
            )
            key = keys.order(order.order_id)
            transaction.add(
                _ORDER + order.order_id, self._table.update_op(key, moved, condition=guard, return_old_on_failure=True)
            )
            transaction.add(_EVENT + order.order_id, self._table.put_op(items.outbox_item(e.event), if_absent=True))
            transaction.add(HISTORY + ":" + order.order_id, history_op(self._table, e.move))
        # One item may appear once in a transaction: the orders' units of a bucket are added together,
        # each back in the bucket it came from.
        for label, op in self._stock.restore_ops(line for e in expiring for line in e.order.lines):
            transaction.add(label, op)
        return transaction
