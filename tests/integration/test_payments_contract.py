"""The Payments port's contract: the same scenarios against the in-memory fake and PaymentRepository on moto.

Unit tests (tests/unit/test_payments.py) trust InMemoryPayments to start, refuse and record attempts
as the repository does; every test here runs against both (``[in-memory]`` and ``[dynamodb]``).
"""

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from local.harness.builders import NOW, euros, key_for, order
from shopfeed.commerce import bootstrap, events, items
from shopfeed.commerce.errors import OrderNotPayable, PaymentAmountMismatch, PaymentInProgress
from shopfeed.commerce.models import Order, OrderStatus, PaymentAttempt, PaymentStatus
from shopfeed.commerce.payments.services import Payments
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import iso, new_id
from shopfeed.platform.errors import IdempotencyKeyReused, NotFound
from tests.unit.payment_fakes import InMemoryPayments


@dataclass(frozen=True)
class Backend:
    """A Payments implementation and how to give it an order."""

    store: Payments
    add_order: Callable[[Order], None]


@pytest.fixture(params=["in-memory", "dynamodb"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "in-memory":
        fake = InMemoryPayments()
        return Backend(fake, lambda placed: fake.orders.__setitem__(placed.order_id, placed))
    request.getfixturevalue("aws")

    def add(placed: Order) -> None:
        # The order's items as placing it writes them (its stock and catalog are not this port's).
        for written in (items.order_item(placed), *(items.order_line_item(placed, line) for line in placed.lines)):
            clients.dynamodb().put_item(TableName="CommerceTable", Item=dynamo.serialize(written))

    return Backend(bootstrap.payments(), add)


def placed(backend: Backend, amount: int = 2000, status: OrderStatus = OrderStatus.PLACED) -> Order:
    made = order([("P-1", 1, euros(amount))], status=status)
    backend.add_order(made)
    return made


def attempt_of(made: Order, amount: int | None = None) -> PaymentAttempt:
    at = iso(NOW)
    return PaymentAttempt(
        attempt_id=new_id(),
        order_id=made.order_id,
        user_id=made.user_id,
        status=PaymentStatus.PENDING,
        amount=euros(amount if amount is not None else made.total.amount),
        created_at=at,
        updated_at=at,
        payment_method="tok_visa",
    )


def settled(attempt: PaymentAttempt, status: PaymentStatus) -> PaymentAttempt:
    outcome = {"provider_reference": "ref"} | ({"decline_code": "2001"} if status is PaymentStatus.DECLINED else {})
    return attempt.model_copy(update={"status": status, "updated_at": iso(NOW), "payment_method": None, **outcome})


def test_a_started_attempt_is_stored_pending_with_its_token_and_answered_without(backend: Backend) -> None:
    # given
    made = placed(backend)
    attempt = attempt_of(made)
    # when
    created = backend.store.start(attempt, key_for("U100", "k1", "pay"), NOW)
    # then
    assert (created.value, created.replayed) == (attempt.model_copy(update={"payment_method": None}), False)
    assert backend.store.get(made.order_id, attempt.attempt_id) == attempt
    assert backend.store.get(made.order_id, "01J00000000000000000000000") is None


def test_a_second_attempt_in_flight_is_refused_naming_the_first(backend: Backend) -> None:
    # given
    made = placed(backend)
    first = attempt_of(made)
    backend.store.start(first, key_for("U100", "k1", "pay"), NOW)
    # when / then
    with pytest.raises(PaymentInProgress) as refused:
        backend.store.start(attempt_of(made), key_for("U100", "k2", "pay"), NOW)
    assert refused.value.attempt_id == first.attempt_id


def test_an_order_refuses_an_attempt_of_another_amount_or_in_another_status(backend: Backend) -> None:
    made = placed(backend)
    with pytest.raises(PaymentAmountMismatch):
        backend.store.start(attempt_of(made, amount=1), key_for("U100", "k1", "pay"), NOW)
    cancelled = placed(backend, status=OrderStatus.CANCELLED)
    with pytest.raises(OrderNotPayable):
        backend.store.start(attempt_of(cancelled), key_for("U100", "k2", "pay"), NOW)
    ghost = order([("P-1", 1, euros(2000))])
    with pytest.raises(NotFound):
        backend.store.start(attempt_of(ghost), key_for("U100", "k3", "pay"), NOW)


def test_a_retry_is_answered_with_the_first_attempt_and_another_body_is_refused(backend: Backend) -> None:
    # given
    made = placed(backend)
    first = backend.store.start(attempt_of(made), key_for("U100", "k1", "pay"), NOW).value
    # when
    replay = backend.store.start(attempt_of(made), key_for("U100", "k1", "pay"), NOW)
    # then
    assert (replay.value, replay.replayed) == (first, True)
    with pytest.raises(IdempotencyKeyReused):
        backend.store.start(attempt_of(made), key_for("U100", "k1", "pay", body={"other": 1}), NOW)


def test_an_approval_is_recorded_once_and_pays_the_order(backend: Backend) -> None:
    # given
    made = placed(backend)
    attempt = attempt_of(made)
    backend.store.start(attempt, key_for("U100", "k1", "pay"), NOW)
    approved = settled(attempt, PaymentStatus.AUTHORIZED)
    # when
    first = backend.store.record(approved, made, events.payment_settled(approved))
    second = backend.store.record(approved, made, events.payment_settled(approved))
    # then
    assert (first, second) == (True, False)
    assert backend.store.get(made.order_id, attempt.attempt_id) == approved
    paid = backend.store.get_order(made.order_id)
    assert paid is not None
    assert (paid.status, paid.version) == (OrderStatus.PAID, 2)


def test_a_decline_is_recorded_and_the_order_takes_a_new_attempt(backend: Backend) -> None:
    # given
    made = placed(backend)
    attempt = attempt_of(made)
    backend.store.start(attempt, key_for("U100", "k1", "pay"), NOW)
    declined = settled(attempt, PaymentStatus.DECLINED)
    # when
    recorded = backend.store.record(declined, made, events.payment_settled(declined))
    # then
    assert recorded is True
    still = backend.store.get_order(made.order_id)
    assert still is not None
    assert (still.status, still.version) == (OrderStatus.PLACED, 1)
    again = backend.store.start(attempt_of(made), key_for("U100", "k2", "pay"), NOW)
    assert again.value.status is PaymentStatus.PENDING
