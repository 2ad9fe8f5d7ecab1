"""Payments without a network: the sandbox's outcome table, the worker's settling against in-memory
ports (a counting provider), and the payment events."""

import pytest

from local.harness.builders import NOW, euros, key_for, order
from shopfeed.commerce import events
from shopfeed.commerce.models import Order, OrderStatus, PaymentAttempt, PaymentStatus
from shopfeed.commerce.payments import services as payments
from shopfeed.commerce.payments.provider import Approved, Declined, ProviderUnavailable, sandbox_outcome
from shopfeed.commerce.payments.services import PaymentTask, Settlement, UnknownAttempt
from shopfeed.platform.clock import iso
from shopfeed.platform.identity import Caller
from shopfeed.platform.outbox import OutboxEvent
from tests.unit.payment_fakes import CountingProvider, InMemoryPayments

ADA = Caller("U100", frozenset())
APPROVED = Approved(reference="ref-1")


# -- the sandbox's table -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        (1999, "approved"),
        (199_999, "approved"),
        (200_000, "declined 2000"),
        (200_150, "declined 2001"),
        (299_999, "declined 2999"),
        (300_000, "unavailable"),
        (300_099, "unavailable"),
        (300_100, "approved"),
    ],
)
def test_the_sandbox_decides_by_amount(amount: int, expected: str) -> None:
    # when
    outcome = sandbox_outcome("A1", euros(amount))
    # then
    match outcome:
        case None:
            got = "unavailable"
        case Declined(code=code):
            got = f"declined {code}"
        case Approved():
            got = "approved"
    assert got == expected


def test_the_sandbox_answers_one_attempt_alike_every_time_and_another_differently() -> None:
    assert sandbox_outcome("A1", euros(1999)) == sandbox_outcome("A1", euros(1999))
    assert sandbox_outcome("A1", euros(1999)) != sandbox_outcome("A2", euros(1999))


# -- starting ----------------------------------------------------------------------------------------


def test_starting_a_payment_writes_a_pending_attempt_for_the_quoted_amount() -> None:
    # given
    placed = order([("P-1", 2, euros(1000))])
    store = InMemoryPayments([placed])
    # when
    created = payments.start_payment(store, ADA, key_for("U100", "k", "pay"), placed.order_id, euros(2000), "tok_visa")
    # then
    attempt = created.value
    assert (attempt.status, attempt.amount, attempt.user_id) == (PaymentStatus.PENDING, euros(2000), "U100")
    assert attempt.payment_method is None  # the answer never carries the token
    assert store.get(placed.order_id, attempt.attempt_id).payment_method == "tok_visa"  # type: ignore[union-attr]


# -- settling --------------------------------------------------------------------------------------


def started(amount: int = 2000) -> tuple[InMemoryPayments, PaymentTask]:
    """An order of ``amount`` with its payment started."""
    placed = order([("P-1", 1, euros(amount))])
    store = InMemoryPayments([placed])
    request = key_for("U100", "k", "pay")
    attempt = payments.start_payment(store, ADA, request, placed.order_id, euros(amount), "tok_visa").value
    return store, PaymentTask(order_id=placed.order_id, attempt_id=attempt.attempt_id)


def test_an_approval_settles_the_attempt_pays_the_order_and_writes_its_event() -> None:
    # given
    store, task = started()
    provider = CountingProvider(APPROVED)
    # when
    settled = payments.settle_payment(store, provider, task)
    # then the provider was asked once, under the attempt's id, with the token the attempt kept
    assert settled is Settlement.AUTHORIZED
    ((call),) = provider.calls
    assert (call.attempt_id, call.amount, call.payment_method) == (task.attempt_id, euros(2000), "tok_visa")
    attempt = store.get(task.order_id, task.attempt_id)
    assert attempt is not None
    assert (attempt.status, attempt.provider_reference, attempt.payment_method) == (
        PaymentStatus.AUTHORIZED,
        "ref-1",
        None,
    )
    assert store.orders[task.order_id].status is OrderStatus.PAID
    assert [e.event_type for e in store.events] == [events.PAYMENT_AUTHORIZED]


def test_a_decline_settles_the_attempt_and_leaves_the_order_payable() -> None:
    # given
    store, task = started()
    # when
    settled = payments.settle_payment(store, CountingProvider(Declined(reference="r", code="2001")), task)
    # then
    assert settled is Settlement.DECLINED
    assert store.get(task.order_id, task.attempt_id).decline_code == "2001"  # type: ignore[union-attr]
    assert store.orders[task.order_id].status is OrderStatus.PLACED
    assert task.order_id not in store.in_flight
    assert [e.event_type for e in store.events] == [events.PAYMENT_DECLINED]


def test_a_settled_attempt_is_not_sent_to_the_provider_again() -> None:
    # given
    store, task = started()
    provider = CountingProvider(APPROVED)
    payments.settle_payment(store, provider, task)
    # when the message comes again, twice
    again = [payments.settle_payment(store, provider, task) for _ in range(2)]
    # then
    assert again == [Settlement.ALREADY_SETTLED] * 2
    assert len(provider.calls) == 1
    assert len(store.events) == 1


def test_an_unavailable_provider_raises_and_leaves_the_attempt_pending() -> None:
    # given
    store, task = started()
    # when / then
    with pytest.raises(ProviderUnavailable):
        payments.settle_payment(store, CountingProvider(None), task)
    assert store.get(task.order_id, task.attempt_id).status is PaymentStatus.PENDING  # type: ignore[union-attr]
    assert store.in_flight == {task.order_id: task.attempt_id}
    assert store.events == []


class ReadEarlier:
    """The store as a delivery sees it whose read of the attempt came before another delivery's record."""

    def __init__(self, store: InMemoryPayments, read: PaymentAttempt | None) -> None:
        self._store, self._read = store, read

    def get(self, order_id: str, attempt_id: str) -> PaymentAttempt | None:
        return self._read

    def get_order(self, order_id: str) -> Order | None:
        return self._store.get_order(order_id)

    def record(self, settled: PaymentAttempt, order: Order, event: OutboxEvent) -> bool:
        return self._store.record(settled, order, event)


def test_two_deliveries_that_both_read_pending_charge_once_and_record_once() -> None:
    # given two deliveries of one message, the second reading the attempt before the first records it
    store, task = started()
    provider = CountingProvider(APPROVED)
    late = ReadEarlier(store, store.get(task.order_id, task.attempt_id))
    # when
    first = payments.settle_payment(store, provider, task)
    second = payments.settle_payment(late, provider, task)  # type: ignore[arg-type]
    # then the provider got the same idempotency key twice (a provider answers the second from its
    # record), and only the first recorded: one settlement, one event, one paid order
    assert (first, second) == (Settlement.AUTHORIZED, Settlement.ALREADY_SETTLED)
    assert [call.attempt_id for call in provider.calls] == [task.attempt_id, task.attempt_id]
    assert len(store.events) == 1
    assert store.paid_orders == {("U100", "P-1"): 1}


def test_a_message_for_an_unknown_attempt_fails() -> None:
    store, task = started()
    with pytest.raises(UnknownAttempt):
        payments.settle_payment(store, CountingProvider(APPROVED), task.model_copy(update={"attempt_id": "A-GONE"}))


# -- events ----------------------------------------------------------------------------------------


def test_a_settlements_event_id_comes_from_its_attempt_whenever_it_is_recorded() -> None:
    # given one attempt settled at two different moments (a first try that did not commit, then another)
    at = iso(NOW)
    attempt = PaymentAttempt(
        attempt_id="01JQ8Z6V4C0000000000000000",
        order_id="01JQ8Z6V4C0000000000000001",
        user_id="U100",
        status=PaymentStatus.AUTHORIZED,
        amount=euros(100),
        created_at=at,
        updated_at=at,
        provider_reference="r",
    )
    later = attempt.model_copy(update={"updated_at": "2026-03-05T10:00:05.000Z"})
    # then the event is the same event
    assert events.payment_settled(attempt).event_id == events.payment_settled(later).event_id
    declined = attempt.model_copy(update={"status": PaymentStatus.DECLINED, "decline_code": "2001"})
    assert events.payment_settled(declined).event_id != events.payment_settled(attempt).event_id
