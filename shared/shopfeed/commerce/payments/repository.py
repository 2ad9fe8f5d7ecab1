"""CommerceTable calls of payments: the attempt items in their order's partition, the order's
``payment_pending`` guard, and the outcome recorded with the order's move and its outbox event.

As ``commerce.orders.repository``: domain models out, failed conditions turned into domain errors here (read
by transaction label). The write side (``PaymentRepository``) is what the API and the payment worker
change; the lists (``PaymentQueries``) are plain queries over the platform's pagers.
"""

from datetime import datetime
from typing import Final

from boto3.dynamodb.conditions import Attr

from shopfeed.commerce import items, keys
from shopfeed.commerce.errors import OrderNotPayable, PaymentAmountMismatch, PaymentInProgress
from shopfeed.commerce.models import (
    PAYMENTS_ACTOR,
    Order,
    OrderMove,
    OrderStatus,
    PaymentAttempt,
    PaymentStatus,
    Refund,
    RefundStatus,
)
from shopfeed.commerce.orders.repository import HISTORY, history_op, owned_in_order, read_order
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.dynamo import Transaction, Update
from shopfeed.platform.errors import NotFound
from shopfeed.platform.idempotency import Created, IdempotentRequest, Snapshot
from shopfeed.platform.models import Page
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.pagination import Reader, Source

# Transaction labels: cancellation reasons are read by these, never by position.
_ATTEMPT: Final = "attempt"
_ORDER: Final = "order"
_EVENT: Final = "event"
_PURCHASE: Final = "purchase:"

# What a key record keeps of the attempt it created (never the payment method token).
ATTEMPT_SNAPSHOT: Final = Snapshot(PaymentAttempt, version=1)


class PaymentRepository:
    """Payment attempts: started by the API, settled once by the payment worker."""

    def __init__(self, table: dynamo.Table) -> None:
        self._table = table

    def start(self, attempt: PaymentAttempt, request: IdempotentRequest, now: datetime) -> Created[PaymentAttempt]:
        """One TransactWriteItems: the Pending attempt, the order marked as paying it, the key record.

        The order's condition is the whole rule: it is Placed, its total is the amount quoted, and no
        other attempt is in flight. So of any number of concurrent attempts one commits, and a replay
        (checked first) is answered from the key record in CancellationReasons.
        """
        order = attempt.order_id
        pay = Update(set={items.PAYMENT_PENDING: attempt.attempt_id})
        payable = (
            Attr(dynamo.PARTITION).exists()
            & Attr("status").eq(OrderStatus.PLACED.value)
            & Attr(items.PAYMENT_PENDING).not_exists()
            & Attr("total.amount").eq(attempt.amount.amount)
            & Attr("total.currency").eq(attempt.amount.currency)
        )
        answer = attempt.model_copy(update={"payment_method": None})
        transaction = Transaction()
        transaction.add(_ATTEMPT, self._table.put_op(items.payment_attempt_item(attempt), if_absent=True))
        transaction.add(
            _ORDER, self._table.update_op(keys.order(order), pay, condition=payable, return_old_on_failure=True)
        )
        busy = f"order {order}"
        try:
            return idempotency.commit(self._table, transaction, request, ATTEMPT_SNAPSHOT, answer, now, busy)
        except dynamo.TransactionCancelled as cancelled:
            refused = cancelled.reason(_ORDER)
            if refused.failed_condition:
                raise _not_payable(attempt, refused.item) from cancelled
            raise

    def get_order(self, order_id: str) -> Order | None:
        """The order with its lines (one strongly consistent Query)."""
        return read_order(self._table, order_id)

    def get(self, order_id: str, attempt_id: str) -> PaymentAttempt | None:
        """One attempt, strongly consistent (the worker's check before it calls the provider)."""
        item = self._table.get(keys.payment_attempt(order_id, attempt_id))
        return items.payment_attempt_from(item) if item else None

    def record(self, settled: PaymentAttempt, order: Order, event: OutboxEvent) -> bool:
        """The provider's answer, in one TransactWriteItems: the attempt settled (only if still
        Pending), the order Paid (approval) or payable again (decline), the outbox event, and on
        approval one proof of purchase per product and the move in the order's history. False when
        the attempt was already settled: a redelivered or concurrent message, which changes nothing."""
        attempt_key = keys.payment_attempt(settled.order_id, settled.attempt_id)
        outcome = {
            "status": settled.status.value,
            "updated_at": settled.updated_at,
            "provider_reference": settled.provider_reference,
            "decline_code": settled.decline_code,
        }
        settle = Update(
            set={name: value for name, value in outcome.items() if value is not None},
            # Out of the pending index, and the token is no longer needed by anyone.
            remove=[keys.PENDING_PAYMENTS.partition_key, keys.PENDING_PAYMENTS.sort_key, "payment_method"],
        )
        in_flight = Attr(items.PAYMENT_PENDING).eq(settled.attempt_id)
        transaction = Transaction()
        transaction.add(
            _ATTEMPT,
            self._table.update_op(attempt_key, settle, condition=Attr("status").eq(PaymentStatus.PENDING.value)),
        )
        move = _order_move(settled, order)
        transaction.add(_ORDER, self._table.update_op(keys.order(order.order_id), move, condition=in_flight))
        transaction.add(_EVENT, self._table.put_op(items.outbox_item(event), if_absent=True))
        if settled.status is PaymentStatus.AUTHORIZED:
            for line in order.lines:
                proof = items.purchase_change(order.user_id, line.product_id, +1)
                transaction.add(_PURCHASE + line.product_id, self._table.update_op(*proof))
            # ``order`` was read with the attempt in flight, which no other move passes: its version is
            # the stored one, and the move below adds one to it.
            paid = order.model_copy(
                update={"status": OrderStatus.PAID, "version": order.version + 1, "updated_at": settled.updated_at}
            )
            why = f"payment {settled.attempt_id} authorized"
            transaction.add(HISTORY, history_op(self._table, OrderMove.of(order.status, paid, PAYMENTS_ACTOR, why)))
        return self._settle(transaction, order.order_id)

    def record_refund(self, attempt: PaymentAttempt, settled: Refund, order: Order, event: OutboxEvent) -> bool:
        """The provider's answer to a refund, in one TransactWriteItems: the attempt's refund settled
        (only if this refund is still Pending), the order Refunded (approval: its refund in flight
        was this one) or left as it is (decline), and the outbox event. A declined refund takes its
        amount back off the attempt's ``refunded`` total: nothing was given back. False when the
        refund was settled already (a redelivered or concurrent message), which changes nothing."""
        attempt_key = keys.payment_attempt(attempt.order_id, attempt.attempt_id)
        approved = settled.status is RefundStatus.REFUNDED
        settle = Update(
            set={"refund": settled.model_dump(exclude_none=True)},
            add={} if approved else {items.REFUNDED: -settled.amount.amount},
        )
        pending = Attr("refund.refund_id").eq(settled.refund_id) & Attr("refund.status").eq(RefundStatus.PENDING.value)
        # The order as read: with its refund in flight no other move passes it (a second returned
        # parcel only checks it), so the version read is the stored one and the move adds one to it.
        in_flight = Attr(items.REFUND_PENDING).eq(settled.refund_id) & Attr("version").eq(order.version)
        transaction = Transaction()
        transaction.add(_ATTEMPT, self._table.update_op(attempt_key, settle, condition=pending))
        transaction.add(
            _ORDER, self._table.update_op(keys.order(order.order_id), _refund_move(settled, order), condition=in_flight)
        )
        transaction.add(_EVENT, self._table.put_op(items.outbox_item(event), if_absent=True))
        if approved:
            refunded = order.model_copy(
                update={"status": OrderStatus.REFUNDED, "version": order.version + 1, "updated_at": settled.updated_at}
            )
            why = f"refund {settled.refund_id} of payment {attempt.attempt_id} refunded"
            move = OrderMove.of(order.status, refunded, PAYMENTS_ACTOR, why)
            transaction.add(HISTORY, history_op(self._table, move))
        return self._settle(transaction, order.order_id)

    def _settle(self, transaction: Transaction, order_id: str) -> bool:
        """Commit a settlement; False when its attempt's condition failed (settled already)."""
        try:
            self._table.transact(transaction, busy=f"order {order_id}")
        except dynamo.TransactionCancelled as cancelled:
            if cancelled.failed(_ATTEMPT):
                return False
            raise
        return True


def _refund_move(settled: Refund, order: Order) -> Update:
    if settled.status is not RefundStatus.REFUNDED:
        return Update(remove=[items.REFUND_PENDING])  # declined: the order stays Cancelled or Returned
    refunded = order.model_copy(update={"status": OrderStatus.REFUNDED, "updated_at": settled.updated_at})
    change = Update(
        set={"status": OrderStatus.REFUNDED.value, "updated_at": settled.updated_at},
        add={"version": 1},
        remove=[items.REFUND_PENDING],
    )
    return dynamo.reindexed(keys.INDEXES, items.order_item(refunded), change)


def _order_move(settled: PaymentAttempt, order: Order) -> Update:
    if settled.status is not PaymentStatus.AUTHORIZED:
        return Update(remove=[items.PAYMENT_PENDING])  # declined: payable again, with a new attempt
    paid = Update(
        set={"status": OrderStatus.PAID.value, "updated_at": settled.updated_at},
        add={"version": 1},
        remove=[items.PAYMENT_PENDING],
    )
    return dynamo.reindexed(keys.INDEXES, items.order_item(order.model_copy(update={"status": OrderStatus.PAID})), paid)


def _not_payable(attempt: PaymentAttempt, order: dynamo.Item | None) -> Exception:
    """Why the order refused the attempt, from the order as the failed condition saw it."""
    if order is None:
        return NotFound("order", attempt.order_id)
    if order["status"] != OrderStatus.PLACED.value:
        return OrderNotPayable(attempt.order_id, str(order["status"]))
    if items.PAYMENT_PENDING in order:
        return PaymentInProgress(attempt.order_id, str(order[items.PAYMENT_PENDING]))
    return PaymentAmountMismatch(attempt.order_id, attempt.amount.model_dump(), dict(order["total"]))


class PaymentQueries:
    """The payment lists: ECOM-006 (an order's attempts) and ECOM-007 (pending attempts)."""

    def __init__(self, table: dynamo.Table, cursors: CursorCodec) -> None:
        self._pages = Reader(table, cursors)

    def list_for_order(self, order_id: str, owner: str | None, limit: int, cursor: str | None) -> Page[PaymentAttempt]:
        """ECOM-006: one strongly consistent Query of the order's partition, newest first (attempt ids
        are ULIDs). With ``owner``, someone else's attempts are filtered out in the same Query."""
        return owned_in_order(
            self._pages,
            items.payment_attempt_from,
            "order-payments",
            keys.PAYMENT,
            order_id,
            owner,
            limit,
            cursor,
            forward=False,
            consistent=True,
        )

    def list_pending(self, limit: int, cursor: str | None) -> Page[PaymentAttempt]:
        """ECOM-007: every write shard of the sparse PendingPayments index, merged oldest first."""
        shards = [
            Source(keys.PENDING_PAYMENTS, keys.pending_partition(shard)) for shard in range(keys.PENDING_PAYMENT_SHARDS)
        ]
        return self._pages.merged_of(
            items.payment_attempt_from, "pending-payments", shards, limit, cursor, newest_first=False
        )
