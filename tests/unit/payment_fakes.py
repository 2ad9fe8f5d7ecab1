"""In-memory stand-ins for the payment ports: the attempts store and a provider that counts its calls.

``InMemoryPayments`` answers and refuses like PaymentRepository (tests/integration/test_payments_contract.py
runs the same scenarios against both); ``CountingProvider`` is a PaymentProvider whose answers a test
scripts, keeping every call.
"""

from dataclasses import dataclass, field
from datetime import datetime

from shopfeed.commerce.errors import OrderNotPayable, PaymentAmountMismatch, PaymentInProgress
from shopfeed.commerce.models import Order, OrderStatus, PaymentAttempt, PaymentStatus
from shopfeed.commerce.payments.provider import Outcome, ProviderUnavailable
from shopfeed.commerce.payments.repository import ATTEMPT_SNAPSHOT
from shopfeed.platform.errors import IdempotencyKeyReused, NotFound
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.types import Money


class InMemoryPayments:
    """The ``Payments`` port in memory: orders, their attempts, the in-flight guard, the outbox."""

    def __init__(self, orders: list[Order] | None = None) -> None:
        self.orders: dict[str, Order] = {order.order_id: order for order in orders or []}
        self.attempts: dict[tuple[str, str], PaymentAttempt] = {}
        self.in_flight: dict[str, str] = {}  # order id -> attempt id (the order's payment_pending)
        self.events: list[OutboxEvent] = []
        self.paid_orders: dict[tuple[str, str], int] = {}  # (user, product) -> count
        self._keys: dict[tuple[str, str], tuple[str, dict[str, object]]] = {}

    def get_order(self, order_id: str) -> Order | None:
        return self.orders.get(order_id)

    def start(self, attempt: PaymentAttempt, request: IdempotentRequest, now: datetime) -> Created[PaymentAttempt]:
        # As the transaction decides: the key record first, then the order's condition.
        recorded = self._keys.get((request.user_id, request.key))
        if recorded is not None:
            fingerprint, stored = recorded
            if fingerprint != request.fingerprint:
                raise IdempotencyKeyReused(request.key)
            # Read back through the same Snapshot the repository uses, never the object first answered.
            return Created(ATTEMPT_SNAPSHOT.load(stored), replayed=True)
        order = self.orders.get(attempt.order_id)
        if order is None:
            raise NotFound("order", attempt.order_id)
        if order.status is not OrderStatus.PLACED:
            raise OrderNotPayable(order.order_id, order.status.value)
        if order.order_id in self.in_flight:
            raise PaymentInProgress(order.order_id, self.in_flight[order.order_id])
        if order.total != attempt.amount:
            raise PaymentAmountMismatch(order.order_id, attempt.amount.model_dump(), order.total.model_dump())
        answer = attempt.model_copy(update={"payment_method": None})
        self.attempts[(attempt.order_id, attempt.attempt_id)] = attempt
        self.in_flight[order.order_id] = attempt.attempt_id
        self._keys[(request.user_id, request.key)] = (request.fingerprint, ATTEMPT_SNAPSHOT.attributes(answer))
        return Created(answer)

    def get(self, order_id: str, attempt_id: str) -> PaymentAttempt | None:
        return self.attempts.get((order_id, attempt_id))

    def record(self, settled: PaymentAttempt, order: Order, event: OutboxEvent) -> bool:
        key = (settled.order_id, settled.attempt_id)
        if self.attempts[key].status is not PaymentStatus.PENDING:
            return False
        if self.in_flight.get(order.order_id) != settled.attempt_id:
            raise AssertionError("the order's condition would cancel this transaction")
        self.attempts[key] = settled.model_copy(update={"payment_method": None})
        del self.in_flight[order.order_id]
        if settled.status is PaymentStatus.AUTHORIZED:
            self.orders[order.order_id] = order.model_copy(
                update={"status": OrderStatus.PAID, "updated_at": settled.updated_at, "version": order.version + 1}
            )
            for line in order.lines:
                proof = (order.user_id, line.product_id)
                self.paid_orders[proof] = self.paid_orders.get(proof, 0) + 1
        self.events.append(event)
        return True


@dataclass(frozen=True)
class Call:
    attempt_id: str
    amount: Money
    payment_method: str


@dataclass
class CountingProvider:
    """Answers ``outcome`` (or is unavailable when it is None) and keeps every call."""

    outcome: Outcome | None
    calls: list[Call] = field(default_factory=list)

    def authorize(self, attempt_id: str, amount: Money, payment_method: str) -> Outcome:
        self.calls.append(Call(attempt_id, amount, payment_method))
        if self.outcome is None:
            raise ProviderUnavailable(attempt_id)
        return self.outcome

    def refund(self, refund_id: str, amount: Money, charge_reference: str) -> Outcome:
        self.calls.append(Call(refund_id, amount, charge_reference))
        if self.outcome is None:
            raise ProviderUnavailable(refund_id)
        return self.outcome
