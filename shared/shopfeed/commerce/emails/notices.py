"""The integration events a customer is told about, read from the bus's envelope as it reaches the email
queue (EventBridge → SQS: the message body is the whole event), and the template of each.

The stable id is ``detail.metadata.event_id`` (the outbox event's id, the same on every delivery and every
re-drive); EventBridge's own ``id`` changes when the outbox publishes an event again. Refunds and expiry
come from other parts of the order lifecycle as ``PaymentRefunded`` and ``OrderExpired``, with at least
``order_id`` and ``user_id`` in ``detail.data`` (and ``amount`` for a refund).
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from aws_lambda_powertools.utilities.data_classes.event_bridge_event import EventBridgeEvent
from pydantic import Field

from shopfeed.commerce import events
from shopfeed.platform.models import Model

PAYMENT_REFUNDED: Final = "PaymentRefunded"
ORDER_EXPIRED: Final = "OrderExpired"
SHIPPED: Final = "Shipped"


class Notice(Model):
    """One event as the email worker reads it: its stable id, its type, whose order, and its data."""

    event_id: str = Field(min_length=1)
    event_type: str = Field(min_length=1)
    order_id: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    data: dict[str, Any]


def notice_from(body: str) -> Notice:
    """The notice an email queue message carries. Raises ValueError (pydantic's ValidationError, a bad
    JSON body, a missing member) for a message that is not a commerce event in the outbox's envelope."""
    try:
        event = EventBridgeEvent(_json(body))
        detail = event.detail
        data = detail["data"]
        return Notice(
            event_id=detail["metadata"]["event_id"],
            event_type=event.detail_type,
            order_id=data["order_id"],
            user_id=data["user_id"],
            data=data,
        )
    except (KeyError, TypeError) as missing:
        raise ValueError(f"not a commerce event: {missing!r}") from None


def _json(body: str) -> dict[str, Any]:
    parsed = json.loads(body)  # a JSONDecodeError is a ValueError
    if not isinstance(parsed, dict):
        raise ValueError("not a JSON object")
    return parsed


# -- templates -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Email:
    subject: str
    text: str  # the body without its greeting: the customer's name is read after the claim

    def body_for(self, name: str) -> str:
        return f"Hello {name},\n\n{self.text}\n\nThe shopfeed team\n"


@dataclass(frozen=True)
class Template:
    """One event type's email: a subject and paragraphs with ``{placeholders}`` of ``fields``;
    ``wanted`` says which events of the type are told at all (an order status change is told when the
    order ships, not when it is delivered)."""

    subject: str
    paragraphs: tuple[str, ...]
    wanted: Callable[[Notice], bool] = lambda notice: True

    def render(self, notice: Notice) -> Email:
        """The email of ``notice``. Raises ValueError when its data lacks what the template shows."""
        try:
            values = fields(notice)
            return Email(
                subject=self.subject.format_map(values),
                text="\n\n".join(paragraph.format_map(values) for paragraph in self.paragraphs),
            )
        except (KeyError, TypeError) as missing:
            raise ValueError(f"{notice.event_type} {notice.event_id} lacks {missing}") from None


# Minor units per currency where it is not 2 (ISO 4217's exponent).
_EXPONENTS: Final = {
    **dict.fromkeys(("BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "VND"), 0),
    **dict.fromkeys(("VUV", "XAF", "XOF", "XPF"), 0),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
}


def money(value: Mapping[str, Any]) -> str:
    """``{"amount": 3998, "currency": "EUR"}`` as ``39.98 EUR``."""
    exponent = _EXPONENTS.get(str(value["currency"]), 2)
    amount = int(value["amount"])
    whole, minor = divmod(abs(amount), 10**exponent)
    text = f"{whole}.{minor:0{exponent}d}" if exponent else str(whole)
    return f"{'-' if amount < 0 else ''}{text} {value['currency']}"


class _Fields(dict[str, str]):
    """What a template may show, computed when it asks (a refund has no lines, an order no amount)."""

    def __init__(self, notice: Notice) -> None:
        super().__init__(order_id=notice.order_id)
        self._data = notice.data

    def __missing__(self, name: str) -> str:
        data = self._data
        if name in ("total", "amount"):
            return money(data[name])
        if name == "lines":
            return "\n".join(
                f"  {line['quantity']} x {line['product_id']} at {money(line['unit_price'])}" for line in data["lines"]
            )
        return str(data[name])


def fields(notice: Notice) -> Mapping[str, str]:
    return _Fields(notice)


TEMPLATES: Final[Mapping[str, Template]] = {
    events.ORDER_PLACED: Template(
        "Your order {order_id} is placed",
        (
            "Thank you for your order {order_id}. We hold its items for you until it is paid.",
            "{lines}\n  Total: {total}",
        ),
    ),
    events.PAYMENT_AUTHORIZED: Template(
        "Payment received for order {order_id}",
        ("We received your payment of {amount} for order {order_id}.", "We will write again when it ships."),
    ),
    events.ORDER_STATUS_CHANGED: Template(
        "Your order {order_id} has shipped",
        ("Your order {order_id} is on its way (shipment {shipment_id}).",),
        wanted=lambda notice: notice.data.get("status") == SHIPPED,
    ),
    PAYMENT_REFUNDED: Template(
        "Refund for order {order_id}",
        ("We refunded {amount} for order {order_id}.", "Your bank may take a few days to show it."),
    ),
    ORDER_EXPIRED: Template(
        "Your order {order_id} has expired",
        (
            "Order {order_id} was not paid in time, so we cancelled it and released its items.",
            "You are welcome to order again.",
        ),
    ),
}
"""The event types a customer is emailed about (template.yaml's EmailRule lists the same; a test compares)."""


def template_for(notice: Notice) -> Template | None:
    """The template of ``notice``; None when its type is not one a customer hears about."""
    template = TEMPLATES.get(notice.event_type)
    return template if template is not None and template.wanted(notice) else None
