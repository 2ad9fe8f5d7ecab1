"""Use cases of payments (the playbook's sequence). No HTTP, no queue messages: callers pass values in.

1. ``start_payment`` (the API): the order's owner asks to pay; a Pending attempt is written with the
   order's ``payment_pending`` guard and answered 202. The provider is not called here.
2. The CommerceTable stream puts each new attempt on the payment queue (``consumers``).
3. ``settle_payment`` (the payment worker): the provider is called with the attempt id as its
   idempotency key, and the outcome, the order's move and the outbox event are one transaction.

Refunds follow the same path: cancelling a paid order or returning a parcel starts one on the order's
authorized attempt (``payments.refunds``), the stream queues it, and ``settle_refund`` calls the
provider with the refund id as its idempotency key and records the answer in one transaction.
"""

from datetime import datetime
from enum import StrEnum
from typing import Protocol

from shopfeed.commerce import events
from shopfeed.commerce.models import Order, PaymentAttempt, PaymentStatus, Refund, RefundStatus
from shopfeed.commerce.payments.provider import Approved, Outcome, PaymentProvider
from shopfeed.platform.clock import iso, new_id, utc_now
from shopfeed.platform.errors import Forbidden, NotFound
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.identity import OPS, Caller
from shopfeed.platform.models import Model, Page
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.types import Money


class Orders(Protocol):
    """Where payments read orders (CommerceRepository)."""

    def get_order(self, order_id: str) -> Order | None: ...


class Payments(Orders, Protocol):
    """The write side of payments, and the orders it reads (PaymentRepository, or a fake in unit tests)."""

    def start(self, attempt: PaymentAttempt, request: IdempotentRequest, now: datetime) -> Created[PaymentAttempt]:
        """Write the Pending attempt if the order is payable; raises the reason it is not."""
        ...

    def get(self, order_id: str, attempt_id: str) -> PaymentAttempt | None:
        """The attempt as stored now (strongly consistent)."""
        ...

    def record(self, settled: PaymentAttempt, order: Order, event: OutboxEvent) -> bool:
        """Settle the attempt with the order's move and the event; False if it was settled already."""
        ...


class Refunds(Orders, Protocol):
    """Where the payment worker settles refunds (PaymentRepository)."""

    def get(self, order_id: str, attempt_id: str) -> PaymentAttempt | None: ...

    def record_refund(self, attempt: PaymentAttempt, settled: Refund, order: Order, event: OutboxEvent) -> bool:
        """Settle the attempt's refund with the order's move and the event; False if it was settled already."""
        ...


class PaymentLists(Protocol):
    """The payment lists (PaymentQueries)."""

    def list_for_order(
        self, order_id: str, owner: str | None, limit: int, cursor: str | None
    ) -> Page[PaymentAttempt]: ...
    def list_pending(self, limit: int, cursor: str | None) -> Page[PaymentAttempt]: ...


# -- the API side ----------------------------------------------------------------------------------


def start_payment(
    payments: Payments,
    caller: Caller,
    request: IdempotentRequest,
    order_id: str,
    amount: Money,
    payment_method: str,
) -> Created[PaymentAttempt]:
    """Start paying the caller's order. Two round trips: the order is read (it must be the caller's),
    then one transaction decides the rest (Placed, the quoted total, nothing in flight). A retry with
    the same Idempotency-Key answers the first attempt whatever the order became since."""
    order = payments.get_order(order_id)
    if order is None or not (order.user_id == caller.user_id or caller.is_ops):
        raise NotFound("order", order_id)  # someone else's order answers like a missing one
    if order.user_id != caller.user_id:
        raise Forbidden("pay someone else's order")
    moment = utc_now()
    now = iso(moment)
    attempt = PaymentAttempt(
        attempt_id=new_id(moment),
        order_id=order_id,
        user_id=order.user_id,
        status=PaymentStatus.PENDING,
        amount=amount,
        created_at=now,
        updated_at=now,
        payment_method=payment_method,
    )
    return payments.start(attempt, request, moment)


def list_order_payments(
    orders: Orders, lists: PaymentLists, caller: Caller, order_id: str, limit: int, cursor: str | None
) -> Page[PaymentAttempt]:
    """ECOM-006, newest first: the owner's or, for ops, anyone's. An empty first page reads the order
    once more to tell "no payment yet" from an order the caller may not see (404)."""
    page = lists.list_for_order(order_id, None if caller.is_ops else caller.user_id, limit, cursor)
    if not page.items and cursor is None:
        order = orders.get_order(order_id)
        if order is None or not (order.user_id == caller.user_id or caller.is_ops):
            raise NotFound("order", order_id)
    return page


def list_pending_payments(lists: PaymentLists, caller: Caller, limit: int, cursor: str | None) -> Page[PaymentAttempt]:
    """ECOM-007, oldest first (ops): what the provider has not answered yet, or what is stuck."""
    caller.require(OPS, "list pending payments")
    return lists.list_pending(limit, cursor)


# -- the worker side -------------------------------------------------------------------------------


class Settlement(StrEnum):
    """What handling one payment message did."""

    AUTHORIZED = "authorized"
    DECLINED = "declined"
    ALREADY_SETTLED = "already-settled"
    REFUNDED = "refunded"
    REFUND_DECLINED = "refund-declined"


class UnknownAttempt(Exception):
    """A message names an attempt (or order) that does not exist: it fails, and after the queue's
    receives it waits in the dead-letter queue for someone to look at it."""

    def __init__(self, order_id: str, attempt_id: str) -> None:
        super().__init__(f"no payment attempt {attempt_id} of order {order_id}")


class PaymentTask(Model):
    """The payment queue's message: which attempt to settle (never the token: the worker reads it)."""

    order_id: str
    attempt_id: str


class RefundTask(PaymentTask):
    """The payment queue's message for a refund: which refund of which attempt to carry out."""

    refund_id: str


def _answer(outcome: Outcome) -> dict[str, str | None]:
    """What a settled attempt or refund records of the provider's answer."""
    code = None if isinstance(outcome, Approved) else outcome.code
    return {"updated_at": iso(utc_now()), "provider_reference": outcome.reference, "decline_code": code}


def settle_payment(payments: Payments, provider: PaymentProvider, task: PaymentTask) -> Settlement:
    """Call the provider for a Pending attempt and record its answer; an attempt settled already is
    left alone without calling the provider (a redelivered message). Raises ProviderUnavailable (the
    message comes back after the queue's visibility timeout) and UnknownAttempt."""
    attempt = payments.get(task.order_id, task.attempt_id)
    if attempt is None:
        raise UnknownAttempt(task.order_id, task.attempt_id)
    if attempt.status is not PaymentStatus.PENDING:
        return Settlement.ALREADY_SETTLED
    order = payments.get_order(task.order_id)
    if order is None or attempt.payment_method is None:
        raise UnknownAttempt(task.order_id, task.attempt_id)
    outcome = provider.authorize(attempt.attempt_id, attempt.amount, attempt.payment_method)
    approved = isinstance(outcome, Approved)
    status = PaymentStatus.AUTHORIZED if approved else PaymentStatus.DECLINED
    settled = attempt.model_copy(update={**_answer(outcome), "status": status, "payment_method": None})
    # Two deliveries that both read Pending both reach the provider, which answers the second from its
    # idempotency record; only one of them records it (the attempt must still be Pending).
    if not payments.record(settled, order, events.payment_settled(settled)):
        return Settlement.ALREADY_SETTLED
    return Settlement.AUTHORIZED if approved else Settlement.DECLINED


def settle_refund(refunds: Refunds, provider: PaymentProvider, task: RefundTask) -> Settlement:
    """Call the provider for a Pending refund (the refund id is its idempotency key) and record its
    answer; a refund settled already is left alone without calling the provider (a redelivered
    message). Raises ProviderUnavailable (the message is backed off and comes again) and
    UnknownAttempt (no such refund: it waits in the dead-letter queue)."""
    attempt = refunds.get(task.order_id, task.attempt_id)
    refund = attempt.refund if attempt is not None else None
    if attempt is None or refund is None or refund.refund_id != task.refund_id:
        raise UnknownAttempt(task.order_id, f"{task.attempt_id} (refund {task.refund_id})")
    if refund.status is not RefundStatus.PENDING:
        return Settlement.ALREADY_SETTLED
    order = refunds.get_order(task.order_id)
    if order is None or attempt.provider_reference is None:
        raise UnknownAttempt(task.order_id, task.attempt_id)
    outcome = provider.refund(refund.refund_id, refund.amount, attempt.provider_reference)
    approved = isinstance(outcome, Approved)
    status = RefundStatus.REFUNDED if approved else RefundStatus.FAILED
    settled = refund.model_copy(update={**_answer(outcome), "status": status})
    # As for a payment: two deliveries that both read Pending both reach the provider, which answers
    # the second from its idempotency record; only one records it (the refund must still be Pending).
    if not refunds.record_refund(attempt, settled, order, events.refund_settled(attempt, settled)):
        return Settlement.ALREADY_SETTLED
    return Settlement.REFUNDED if approved else Settlement.REFUND_DECLINED
