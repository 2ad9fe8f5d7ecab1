"""Integration events of the commerce context, as they are written to the outbox.

``detail`` is the public contract subscribers rely on: add fields, never rename or remove them.
"""

from collections.abc import Mapping
from typing import Final

from shopfeed.commerce.models import (
    Order,
    OrderStatus,
    PaymentAttempt,
    PaymentStatus,
    Refund,
    RefundStatus,
    Shipment,
    ShipmentStatus,
)
from shopfeed.platform.clock import derived_id, new_id
from shopfeed.platform.outbox import OutboxEvent

SOURCE: Final = "shopfeed.commerce"
ORDER_PLACED: Final = "OrderPlaced"
ORDER_CANCELLED: Final = "OrderCancelled"
ORDER_EXPIRED: Final = "OrderExpired"
PAYMENT_AUTHORIZED: Final = "PaymentAuthorized"
PAYMENT_DECLINED: Final = "PaymentDeclined"
# The customer-email worker listens for PaymentRefunded by this exact detail-type.
PAYMENT_REFUNDED: Final = "PaymentRefunded"
REFUND_DECLINED: Final = "RefundDeclined"
ORDER_STATUS_CHANGED: Final = "OrderStatusChanged"
SHIPMENT_STATUS_CHANGED: Final = "ShipmentStatusChanged"


def _lines(order: Order) -> list[dict[str, object]]:
    return [
        {"product_id": line.product_id, "quantity": line.quantity, "unit_price": line.unit_price.model_dump()}
        for line in order.lines
    ]


def _order_event(event_type: str, order: Order, occurred_at: str, **detail: object) -> OutboxEvent:
    """An event about ``order``: a new id, the order as aggregate, whose order it is, then ``detail``."""
    return OutboxEvent(
        event_id=new_id(),
        event_type=event_type,
        source=SOURCE,
        aggregate_id=order.order_id,
        occurred_at=occurred_at,
        detail={"order_id": order.order_id, "user_id": order.user_id, **detail},
    )


def order_placed(order: Order) -> OutboxEvent:
    return _order_event(
        ORDER_PLACED,
        order,
        order.placed_at,
        placed_at=order.placed_at,
        total=order.total.model_dump(),
        lines=_lines(order),
    )


def order_cancelled(order: Order, cancelled_by: str) -> OutboxEvent:
    return _order_event(
        ORDER_CANCELLED,
        order,
        order.updated_at,
        cancelled_at=order.updated_at,
        cancelled_by=cancelled_by,
        restocked=_lines(order),
    )


def order_expired(order: Order, window_minutes: int) -> OutboxEvent:
    """The order was not paid within the payment window: it is Expired and its stock restored."""
    return _order_event(
        ORDER_EXPIRED,
        order,
        order.updated_at,
        placed_at=order.placed_at,
        expired_at=order.updated_at,
        payment_window_minutes=window_minutes,
        total=order.total.model_dump(),
        restocked=_lines(order),
    )


# -- payments and shipments -----------------------------------------------------------------------


def _settled(
    event_type: str, created_at: str, settled_id: str, attempt: PaymentAttempt, at: str, detail: Mapping[str, object]
) -> OutboxEvent:
    """A provider's answer as an event. Its id is derived from what was settled, so recording the
    answer twice would put the same event, never a second one."""
    common = {"order_id": attempt.order_id, "attempt_id": attempt.attempt_id, "user_id": attempt.user_id}
    return OutboxEvent(
        event_id=derived_id(created_at, f"{event_type}|{settled_id}"),
        event_type=event_type,
        source=SOURCE,
        aggregate_id=attempt.order_id,
        occurred_at=at,
        detail={**common, **detail},
    )


def payment_settled(attempt: PaymentAttempt) -> OutboxEvent:
    """PaymentAuthorized (the order is Paid by the same transaction) or PaymentDeclined (the order is
    still Placed and payable again)."""
    authorized = attempt.status is PaymentStatus.AUTHORIZED
    outcome = (
        {"provider_reference": attempt.provider_reference, "authorized_at": attempt.updated_at, "order_status": "Paid"}
        if authorized
        else {"decline_code": attempt.decline_code, "declined_at": attempt.updated_at}
    )
    event_type = PAYMENT_AUTHORIZED if authorized else PAYMENT_DECLINED
    detail = {"amount": attempt.amount.model_dump(), **outcome}
    return _settled(event_type, attempt.created_at, attempt.attempt_id, attempt, attempt.updated_at, detail)


def refund_settled(attempt: PaymentAttempt, refund: Refund) -> OutboxEvent:
    """PaymentRefunded (the order is Refunded by the same transaction) or RefundDeclined (the refund
    is Failed; the order stays Cancelled or Returned, and ops take it from there: docs/operations.md)."""
    refunded = refund.status is RefundStatus.REFUNDED
    outcome = (
        {"provider_reference": refund.provider_reference, "refunded_at": refund.updated_at, "order_status": "Refunded"}
        if refunded
        else {"decline_code": refund.decline_code, "declined_at": refund.updated_at}
    )
    event_type = PAYMENT_REFUNDED if refunded else REFUND_DECLINED
    detail = {"refund_id": refund.refund_id, "amount": refund.amount.model_dump(), "reason": refund.reason.value}
    return _settled(
        event_type, refund.requested_at, refund.refund_id, attempt, refund.updated_at, {**detail, **outcome}
    )


def order_status_changed(order: Order, previous: OrderStatus, shipment_id: str) -> OutboxEvent:
    """The order moved along with one of its shipments (Shipped, Delivered, Returned)."""
    return _order_event(
        ORDER_STATUS_CHANGED,
        order,
        order.updated_at,
        previous_status=previous.value,
        status=order.status.value,
        changed_at=order.updated_at,
        shipment_id=shipment_id,
    )


def shipment_status_changed(shipment: Shipment, previous: ShipmentStatus) -> OutboxEvent:
    """Every move of a parcel, whether or not its order moves (a second parcel leaves the order as it is)."""
    return OutboxEvent(
        event_id=new_id(),
        event_type=SHIPMENT_STATUS_CHANGED,
        source=SOURCE,
        aggregate_id=shipment.order_id,
        occurred_at=shipment.updated_at,
        detail={
            "shipment_id": shipment.shipment_id,
            "order_id": shipment.order_id,
            "user_id": shipment.user_id,
            "carrier": shipment.carrier,
            "tracking_number": shipment.tracking_number,
            "previous_status": previous.value,
            "status": shipment.status.value,
            "changed_at": shipment.updated_at,
        },
    )
