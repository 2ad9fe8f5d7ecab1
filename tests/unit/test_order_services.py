"""Order use cases against the in-memory store: place, read, list, cancel."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from ulid import ULID

from local.harness.builders import MONTH, NOW, euros, key_for, line_of, order, placement, product
from local.harness.factories import SteppingClock
from shopfeed.commerce import events
from shopfeed.commerce.models import Order, OrderStatus
from shopfeed.commerce.orders import services
from shopfeed.platform.clock import iso
from shopfeed.platform.errors import Forbidden, InvalidRequest, InvalidTransition, NotFound, StaleVersion
from shopfeed.platform.idempotency import Created
from shopfeed.platform.identity import Caller
from shopfeed.platform.types import Money
from tests.unit.fakes import InMemoryCommerce

SHIRT = product("P-SHIRT", available=10, price=euros(1999))
MUG = product("P-MUG", available=5, price=euros(899))


@pytest.fixture
def stocked(store: InMemoryCommerce) -> InMemoryCommerce:
    for item in (SHIRT, MUG):
        store.add_product(item)
    return store


def place(store: InMemoryCommerce, caller: Caller, *lines: tuple[str, int, Money], key: str = "k-1") -> Created[Order]:
    body = [{"product_id": p, "quantity": q, "unit_price": price.model_dump()} for p, q, price in lines]
    return services.place_order(store, caller, key_for(caller.user_id, key, body=body), list(lines))


def placed(store: InMemoryCommerce, caller: Caller, *lines: tuple[str, int, Money], key: str = "k-1") -> Order:
    return place(store, caller, *lines, key=key).value


def stock(store: InMemoryCommerce, product_id: str) -> int:
    found = store.get_product(product_id)
    assert found is not None
    return found.available


# -- placing ----------------------------------------------------------------------------------


def test_an_order_is_placed_with_numbered_lines_and_a_computed_total(stocked: InMemoryCommerce, ada: Caller) -> None:
    # when
    answer = place(stocked, ada, line_of(SHIRT, 2), line_of(MUG, 3))
    # then
    order = answer.value
    assert answer.replayed is False
    assert (order.user_id, order.status, order.version) == ("U100", OrderStatus.PLACED, 1)
    assert [(line.line_no, line.product_id, line.quantity) for line in order.lines] == [
        (1, "P-SHIRT", 2),
        (2, "P-MUG", 3),
    ]
    assert order.total == euros(2 * 1999 + 3 * 899)
    assert order.line_count == 2
    assert stocked.get_order(order.order_id) == order
    assert (stock(stocked, "P-SHIRT"), stock(stocked, "P-MUG")) == (8, 2)


def test_an_order_id_carries_its_placement_time(stocked: InMemoryCommerce, ada: Caller) -> None:
    # when
    order = placed(stocked, ada, line_of(SHIRT))
    # then
    assert iso(ULID.from_str(order.order_id).datetime) == order.placed_at


def test_order_ids_sort_in_placement_order(
    stocked: InMemoryCommerce, ada: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given
    monkeypatch.setattr(services, "utc_now", SteppingClock(datetime(2026, 3, 5, tzinfo=UTC), timedelta(milliseconds=1)))
    # when
    ids = [placed(stocked, ada, line_of(SHIRT), key=f"k-{n}").order_id for n in range(5)]
    # then
    assert sorted(ids) == ids


def test_placing_an_order_writes_its_order_placed_event(stocked: InMemoryCommerce, ada: Caller) -> None:
    # when
    order = placed(stocked, ada, line_of(SHIRT, 2))
    # then
    [event] = stocked.events
    assert (event.event_type, event.source, event.aggregate_id) == (events.ORDER_PLACED, events.SOURCE, order.order_id)
    assert event.detail == {
        "order_id": order.order_id,
        "user_id": "U100",
        "placed_at": order.placed_at,
        "total": {"amount": 3998, "currency": "EUR"},
        "lines": [{"product_id": "P-SHIRT", "quantity": 2, "unit_price": {"amount": 1999, "currency": "EUR"}}],
    }


def test_a_retried_order_answers_the_first_order_and_changes_nothing(stocked: InMemoryCommerce, ada: Caller) -> None:
    # given
    first = place(stocked, ada, line_of(SHIRT, 2), key="order-1")
    # when
    retried = place(stocked, ada, line_of(SHIRT, 2), key="order-1")
    # then
    assert (retried.value, retried.replayed) == (first.value, True)
    assert stock(stocked, "P-SHIRT") == 8
    assert len(stocked.events) == 1


@pytest.mark.parametrize(
    "lines",
    [
        pytest.param([line_of(SHIRT, 1), line_of(SHIRT, 2)], id="a-product-on-two-lines"),
        pytest.param([line_of(SHIRT), ("P-MUG", 1, Money(amount=999, currency="USD"))], id="mixed-currencies"),
    ],
)
def test_an_order_that_breaks_a_rule_is_refused_before_anything_is_written(
    stocked: InMemoryCommerce, ada: Caller, lines: list[tuple[str, int, Money]]
) -> None:
    # when
    with pytest.raises(InvalidRequest):
        place(stocked, ada, *lines)
    # then
    assert (stock(stocked, "P-SHIRT"), stock(stocked, "P-MUG")) == (10, 5)
    assert stocked.events == ()
    assert stocked.list_orders_of_user("U100", 10, None).items == []


# -- reading ----------------------------------------------------------------------------------


def test_an_order_is_visible_to_its_owner_and_to_ops(stocked: InMemoryCommerce, ada: Caller, ops: Caller) -> None:
    # given
    order = placed(stocked, ada, line_of(SHIRT))
    # then
    assert services.read_order(stocked, ada, order.order_id) == order
    assert services.read_order(stocked, ops, order.order_id) == order


def test_someone_elses_order_reads_as_missing(stocked: InMemoryCommerce, ada: Caller, bob: Caller) -> None:
    # given
    order = placed(stocked, ada, line_of(SHIRT))
    # when
    with pytest.raises(NotFound) as refused:
        services.read_order(stocked, bob, order.order_id)
    # then: exactly what an order that does not exist answers
    with pytest.raises(NotFound) as missing:
        services.read_order(stocked, bob, "01JQ8Z6V4C0000000000000000")
    assert refused.value.kind == missing.value.kind == "order"


def test_order_lines_are_listed_to_the_owner_and_ops_but_not_to_others(
    stocked: InMemoryCommerce, ada: Caller, bob: Caller, ops: Caller
) -> None:
    # given
    order = placed(stocked, ada, line_of(SHIRT), line_of(MUG))
    # when
    owners = services.list_order_lines(stocked, ada, order.order_id, 10, None)
    ops_view = services.list_order_lines(stocked, ops, order.order_id, 10, None)
    # then
    assert list(owners.items) == list(ops_view.items) == list(order.lines)
    with pytest.raises(NotFound):
        services.list_order_lines(stocked, bob, order.order_id, 10, None)
    with pytest.raises(NotFound):
        services.list_order_lines(stocked, ada, "01JQ8Z6V4C0000000000000000", 10, None)


def test_my_orders_are_mine_only_newest_first(stocked: InMemoryCommerce, ada: Caller, bob: Caller) -> None:
    # given
    older = order([line_of(SHIRT)], user_id="U100", placed=datetime(2026, 3, 1, tzinfo=UTC))
    newer = order([line_of(SHIRT)], user_id="U100", placed=datetime(2026, 3, 2, tzinfo=UTC))
    for item in (older, newer, order([line_of(SHIRT)], user_id="U200")):
        stocked.place_order(*placement(item), NOW)
    # when
    page = services.list_my_orders(stocked, ada, 25, None)
    # then
    assert [s.order_id for s in page.items] == [newer.order_id, older.order_id]


def test_listing_orders_by_status_is_for_ops(stocked: InMemoryCommerce, ada: Caller, ops: Caller) -> None:
    # given
    stocked.place_order(*placement(order([line_of(SHIRT)])), NOW)
    # when
    page = services.list_orders_by_status(stocked, ops, OrderStatus.PLACED, MONTH, 200, None)
    # then
    assert len(page.items) == 1
    with pytest.raises(Forbidden):
        services.list_orders_by_status(stocked, ada, OrderStatus.PLACED, MONTH, 200, None)


# -- cancelling -------------------------------------------------------------------------------


def test_cancelling_restocks_bumps_the_version_and_writes_order_cancelled(
    stocked: InMemoryCommerce, ada: Caller
) -> None:
    # given
    order = placed(stocked, ada, line_of(SHIRT, 2), line_of(MUG, 1))
    # when
    cancelled, changed = services.cancel_order(stocked, ada, order.order_id)
    # then
    assert changed
    assert (cancelled.status, cancelled.version) == (OrderStatus.CANCELLED, 2)
    assert stocked.get_order(order.order_id) == cancelled
    assert (stock(stocked, "P-SHIRT"), stock(stocked, "P-MUG")) == (10, 5)
    event = stocked.events[-1]
    assert (event.event_type, event.aggregate_id) == (events.ORDER_CANCELLED, order.order_id)
    assert event.detail["cancelled_by"] == "U100"
    assert [line["product_id"] for line in event.detail["restocked"]] == ["P-SHIRT", "P-MUG"]


def test_cancelling_again_answers_the_cancelled_order_and_restocks_nothing(
    stocked: InMemoryCommerce, ada: Caller
) -> None:
    # given
    order = placed(stocked, ada, line_of(SHIRT, 2))
    first, _ = services.cancel_order(stocked, ada, order.order_id)
    # when
    again, changed = services.cancel_order(stocked, ada, order.order_id)
    # then
    assert (again, changed) == (first, False)
    assert stock(stocked, "P-SHIRT") == 10
    assert [e.event_type for e in stocked.events] == [events.ORDER_PLACED, events.ORDER_CANCELLED]


def test_ops_may_cancel_anyones_order(stocked: InMemoryCommerce, ada: Caller, ops: Caller) -> None:
    # given
    order = placed(stocked, ada, line_of(SHIRT))
    # when
    services.cancel_order(stocked, ops, order.order_id)
    # then
    assert stocked.events[-1].detail["cancelled_by"] == "U-OPS"


def test_nobody_else_may_cancel_an_order(stocked: InMemoryCommerce, ada: Caller, bob: Caller) -> None:
    # given
    order = placed(stocked, ada, line_of(SHIRT))
    # when
    with pytest.raises(NotFound):
        services.cancel_order(stocked, bob, order.order_id)
    # then
    assert stocked.get_order(order.order_id) == order
    assert stock(stocked, "P-SHIRT") == 9


@pytest.mark.parametrize("status", [OrderStatus.SHIPPED, OrderStatus.DELIVERED])
def test_an_order_on_its_way_cannot_be_cancelled(stocked: InMemoryCommerce, ada: Caller, status: OrderStatus) -> None:
    # given
    on_its_way = order([line_of(SHIRT)], user_id="U100", status=status)
    stocked.place_order(*placement(on_its_way), NOW)
    # when
    with pytest.raises(InvalidTransition) as refused:
        services.cancel_order(stocked, ada, on_its_way.order_id)
    # then
    assert (refused.value.current, refused.value.target) == (status, OrderStatus.CANCELLED)
    assert stocked.get_order(on_its_way.order_id) == on_its_way


def test_a_paid_order_can_still_be_cancelled(stocked: InMemoryCommerce, ada: Caller) -> None:
    # given
    paid = order([line_of(SHIRT)], user_id="U100", status=OrderStatus.PAID)
    stocked.place_order(*placement(paid), NOW)
    # when
    cancelled, _ = services.cancel_order(stocked, ada, paid.order_id)
    # then
    assert cancelled.status is OrderStatus.CANCELLED


class LosingARace:
    """The store as one request sees it when a rival request cancels the same order between this
    request's read and its write: the interleaving the version guard exists for."""

    def __init__(self, store: InMemoryCommerce, rival: Caller) -> None:
        self._store, self._rival, self._raced = store, rival, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def get_order(self, order_id: str) -> Order | None:
        read = self._store.get_order(order_id)
        if not self._raced:
            self._raced = True
            services.cancel_order(self._store, self._rival, order_id)
        return read


def test_a_cancel_that_loses_a_race_rereads_and_restocks_only_once(
    stocked: InMemoryCommerce, ada: Caller, ops: Caller
) -> None:
    # given
    order = placed(stocked, ada, line_of(SHIRT, 2))
    # when
    cancelled, _ = services.cancel_order(LosingARace(stocked, rival=ops), ada, order.order_id)
    # then
    assert cancelled == stocked.get_order(order.order_id)
    assert cancelled.status is OrderStatus.CANCELLED
    assert stock(stocked, "P-SHIRT") == 10
    assert [e.detail.get("cancelled_by") for e in stocked.events if e.event_type == events.ORDER_CANCELLED] == ["U-OPS"]


class AlwaysLosing:
    """The store as a request sees it when every write of the order loses to a rival's change."""

    def __init__(self, store: InMemoryCommerce) -> None:
        self._store = store
        self.attempts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def cancel_order(self, order: Order, cancelled: Order, event: Any, move: Any, refund_id: str | None = None) -> None:
        self.attempts += 1
        raise StaleVersion("order", order.order_id, order.version + 1)


def test_a_cancel_that_keeps_losing_gives_up_with_the_stored_version_never_a_null_one(
    stocked: InMemoryCommerce, ada: Caller
) -> None:
    # given
    order = placed(stocked, ada, line_of(SHIRT, 2))
    losing = AlwaysLosing(stocked)
    # when
    with pytest.raises(StaleVersion) as refused:
        services.cancel_order(losing, ada, order.order_id, attempts=3)
    # then: one retry layer, three attempts, and the 412 names a version
    assert losing.attempts == 3
    assert refused.value.current_version == order.version + 1
