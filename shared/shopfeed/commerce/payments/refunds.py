"""CommerceTable calls of refunds: the refund started inside the transaction that cancels or returns
the order, and the payment worker's record of the provider's answer.

A refund is the whole amount of the order's authorized attempt, once (docs/data-model.md, decision
103). It lives on that attempt (``refund``, a map: the payments list shows it with its payment), and
the attempt's ``refunded`` total is the ledger: starting a refund adds its amount under the condition
that the total stays within the amount captured, so no number of concurrent cancels, returns or
redeliveries can refund more than was taken (decision 104). That condition is the rule; nothing is
read first to decide it.
"""

from dataclasses import dataclass
from typing import Final

from boto3.dynamodb.conditions import Attr

from shopfeed.commerce import items, keys
from shopfeed.commerce.errors import RefundExceedsCapture
from shopfeed.commerce.models import (
    OrderStatus,
    PaymentAttempt,
    PaymentStatus,
    Refund,
    RefundStatus,
    Shipment,
    ShipmentStatus,
)
from shopfeed.platform import dynamo
from shopfeed.platform.dynamo import BASE_TABLE, Transaction, Update

# Transaction labels: cancellation reasons are read by these, never by position.
REFUND: Final = "refund"
PARCEL: Final = "parcel:"


@dataclass(frozen=True)
class PaidWith:
    """What a paid order's cancel or return moves besides the order: the attempt that paid it (None
    only for an order never paid) and its parcels not shipped yet."""

    attempt: PaymentAttempt | None
    unshipped: tuple[Shipment, ...] = ()


def paid_with(table: dynamo.Table, order_id: str) -> PaidWith:
    """One strongly consistent Query of the order's partition from its attempts on (attempts and
    shipments sort after the lines and META), filtered to the authorized attempt and Created parcels."""
    wanted = (Attr("entity_type").eq(items.PAYMENT_ATTEMPT) & Attr("status").eq(PaymentStatus.AUTHORIZED.value)) | (
        Attr("entity_type").eq(items.SHIPMENT) & Attr("status").eq(ShipmentStatus.CREATED.value)
    )
    found: list[dynamo.Item] = []
    start = None
    while True:  # a filtered Query pages by what it read, not by what matched: follow it to the end
        response = table.query(
            BASE_TABLE,
            keys.order_partition(order_id),
            where=lambda sk: sk.gte(keys.PAYMENT),
            filter=wanted,
            consistent=True,
            start=start,
        )
        found += [dynamo.deserialize(i) for i in response["Items"]]
        start = response.get("LastEvaluatedKey")
        if not start:
            break
    attempts = [items.payment_attempt_from(i) for i in found if i["entity_type"] == items.PAYMENT_ATTEMPT]
    parcels = tuple(items.shipment_from(i) for i in found if i["entity_type"] == items.SHIPMENT)
    return PaidWith(attempt=attempts[0] if attempts else None, unshipped=parcels)


def new_refund(attempt: PaymentAttempt, refund_id: str, reason: OrderStatus, now: str) -> Refund:
    """The whole payment, back (decision 103)."""
    return Refund(
        refund_id=refund_id,
        status=RefundStatus.PENDING,
        amount=attempt.amount,
        reason=reason,
        requested_at=now,
        updated_at=now,
    )


def add_refund_start(table: dynamo.Table, transaction: Transaction, attempt: PaymentAttempt, refund: Refund) -> None:
    """The refund's start, as an item of the order's own transaction: the attempt carries the Pending
    refund and its ``refunded`` total grows by the amount, only while ``refunded + amount <=
    captured`` (DynamoDB cannot add in a condition: ``refunded <= captured - amount`` says the same)."""
    headroom = attempt.amount.amount - refund.amount.amount
    within = (
        Attr("status").eq(PaymentStatus.AUTHORIZED.value)
        & Attr("amount.currency").eq(refund.amount.currency)
        & (Attr(items.REFUNDED).not_exists() | Attr(items.REFUNDED).lte(headroom))
    )
    start = Update(set={"refund": refund.model_dump(exclude_none=True)}, add={items.REFUNDED: refund.amount.amount})
    key = keys.payment_attempt(attempt.order_id, attempt.attempt_id)
    transaction.add(REFUND, table.update_op(key, start, condition=within, return_old_on_failure=True))


def add_parcel_cancels(table: dynamo.Table, transaction: Transaction, parcels: tuple[Shipment, ...], now: str) -> None:
    """Each parcel not shipped yet, Cancelled with its order (if still Created at the version read)."""
    for parcel in parcels:
        cancelled = parcel.model_copy(
            update={"status": ShipmentStatus.CANCELLED, "updated_at": now, "version": parcel.version + 1}
        )
        change = Update(set={"status": cancelled.status.value, "updated_at": now, "version": cancelled.version})
        moved = dynamo.reindexed(keys.INDEXES, items.shipment_item(cancelled), change)
        unchanged = Attr("version").eq(parcel.version) & Attr("status").eq(ShipmentStatus.CREATED.value)
        key = keys.shipment(parcel.order_id, parcel.shipment_id)
        transaction.add(PARCEL + parcel.shipment_id, table.update_op(key, moved, condition=unchanged))


def raise_refund_refused(attempt: PaymentAttempt, cancelled: dynamo.TransactionCancelled) -> None:
    """If the attempt refused the refund (its ``refunded`` total has no room), say so."""
    refused = cancelled.reason(REFUND)
    if refused.failed_condition:
        refunded = int((refused.item or {}).get(items.REFUNDED, 0))
        raise RefundExceedsCapture(attempt.order_id, attempt.attempt_id, attempt.amount.amount, refunded) from cancelled
