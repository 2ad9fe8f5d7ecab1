"""Integration events of the commerce context, as they are written to the outbox.

``detail`` is the public contract subscribers rely on: add fields, never rename or remove them.
"""

from typing import Final

from shopfeed.commerce.models import Order
from shopfeed.platform.clock import new_id
from shopfeed.platform.outbox import OutboxEvent

SOURCE: Final = "shopfeed.commerce"
ORDER_PLACED: Final = "OrderPlaced"
ORDER_CANCELLED: Final = "OrderCancelled"


def _lines(order: Order) -> list[dict[str, object]]:
    return [
        {"product_id": line.product_id, "quantity": line.quantity, "unit_price": line.unit_price.model_dump()}
        for line in order.lines
    ]


def order_placed(order: Order) -> OutboxEvent:
    return OutboxEvent(
        event_id=new_id(),
        event_type=ORDER_PLACED,
        source=SOURCE,
        aggregate_id=order.order_id,
        occurred_at=order.placed_at,
        detail={
            "order_id": order.order_id,
            "user_id": order.user_id,
            "placed_at": order.placed_at,
            "total": order.total.model_dump(),
            "lines": _lines(order),
        },
    )


def order_cancelled(order: Order, cancelled_by: str) -> OutboxEvent:
    return OutboxEvent(
        event_id=new_id(),
        event_type=ORDER_CANCELLED,
        source=SOURCE,
        aggregate_id=order.order_id,
        occurred_at=order.updated_at,
        detail={
            "order_id": order.order_id,
            "user_id": order.user_id,
            "cancelled_at": order.updated_at,
            "cancelled_by": cancelled_by,
            "restocked": _lines(order),
        },
    )
