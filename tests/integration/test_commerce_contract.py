"""The Commerce port's contract: the same scenarios against the in-memory fake and the real repository.

Unit tests trust InMemoryCommerce to behave like CommerceRepository on DynamoDB; this suite is what
earns that trust. Every test runs twice (``[in-memory]`` and ``[dynamodb]``, moto with the template's
tables); a behaviour only one of them has is a failure here, not a surprise in production.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest

from local.harness.builders import (
    MONTH,
    NEXT_MONTH,
    NOW,
    cancellation,
    euros,
    key_for,
    line_of,
    order,
    placement,
    product,
)
from local.harness.tables import table_items
from shopfeed.commerce import bootstrap, items
from shopfeed.commerce.errors import InsufficientStock, PriceChanged, StockShortage, UnknownProducts
from shopfeed.commerce.models import MAX_ORDER_LINES, Order, OrderStatus, Product, Restocked
from shopfeed.commerce.orders.services import Commerce
from shopfeed.commerce.settings import CommerceApiSettings
from shopfeed.platform.clock import iso
from shopfeed.platform.config import settings
from shopfeed.platform.cursors import CursorCodec, signing_keys
from shopfeed.platform.errors import (
    AlreadyExists,
    IdempotencyKeyReused,
    InvalidCursor,
    NotFound,
    StaleVersion,
)
from shopfeed.platform.idempotency import Created
from shopfeed.platform.models import Page
from shopfeed.platform.outbox import OutboxEvent
from tests.unit.fakes import InMemoryCommerce

LATER = iso(NOW + timedelta(hours=1))


def bare(order: Order | None) -> Order | None:
    """``order`` without the stock buckets its lines took from: which bucket is the repository's choice
    (tests/integration/test_orders_from_buckets.py), not part of this contract."""
    if order is None:
        return None
    return order.model_copy(update={"lines": tuple(line.model_copy(update={"takes": ()}) for line in order.lines)})


def bare_created(created: Created[Order]) -> Created[Order]:
    return Created(bare(created.value) or created.value, replayed=created.replayed)


@dataclass(frozen=True)
class Backend:
    """A Commerce implementation plus a way to read back the outbox it wrote."""

    store: Commerce
    written_events: Callable[[], list[OutboxEvent]]

    def outbox(self) -> list[OutboxEvent]:
        return sorted(self.written_events(), key=lambda e: e.event_id)


def _outbox_of_table() -> list[OutboxEvent]:
    table = settings(CommerceApiSettings).commerce_table_name
    return [items.outbox_event_from(i) for i in table_items(table) if i["entity_type"] == items.OUTBOX_EVENT]


@pytest.fixture(params=["in-memory", "dynamodb"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "in-memory":
        fake = InMemoryCommerce(CursorCodec(signing_keys(settings(CommerceApiSettings))))
        return Backend(fake, lambda: list(fake.events))
    request.getfixturevalue("aws")
    return Backend(bootstrap.repository(), _outbox_of_table)


@pytest.fixture
def store(backend: Backend) -> Commerce:
    return backend.store


def every_page[T](fetch: Callable[[str | None], Page[T]]) -> list[list[T]]:
    pages: list[list[T]] = []
    cursor = None
    for _ in range(50):
        page = fetch(cursor)
        pages.append(page.items)
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor
    raise AssertionError("the cursor never ran out")


def stocked(store: Commerce, *products: Product) -> list[Product]:
    for item in products:
        store.add_product(item)
    return list(products)


def available(store: Commerce, product_id: str) -> int:
    found = store.get_product(product_id)
    assert found is not None
    return found.available


# -- catalog and stock ------------------------------------------------------------------------


def test_a_product_reads_back_as_added_and_its_id_is_unique(store: Commerce) -> None:
    # given
    shirt = product("P-RED-TSHIRT")
    store.add_product(shirt)
    # when
    with pytest.raises(AlreadyExists) as refused:
        store.add_product(product("P-RED-TSHIRT", available=99))
    # then
    assert (refused.value.kind, refused.value.ident) == ("product", "P-RED-TSHIRT")
    assert store.get_product("P-RED-TSHIRT") == shirt


def test_a_product_update_is_versioned(store: Commerce) -> None:
    # given
    store.add_product(product("P-RED-TSHIRT"))
    # when
    updated = store.update_product("P-RED-TSHIRT", 1, {"price": euros(2499).model_dump()}, LATER)
    with pytest.raises(StaleVersion) as stale:
        store.update_product("P-RED-TSHIRT", 1, {"name": "Late"}, LATER)
    with pytest.raises(NotFound) as missing:
        store.update_product("P-NOPE", 1, {"name": "Ghost"}, LATER)
    # then
    assert (updated.price, updated.version) == (euros(2499), 2)
    assert store.get_product("P-RED-TSHIRT") == updated
    assert (stale.value.kind, stale.value.current_version) == ("product", 2)
    assert (missing.value.kind, missing.value.ident) == ("product", "P-NOPE")


def test_a_category_lists_its_products_by_id_in_pages(store: Commerce) -> None:
    # given
    ids = ["P-A", "P-B", "P-C", "P-D", "P-E"]
    for product_id in reversed(ids):
        store.add_product(product(product_id, category="t-shirts"))
    store.add_product(product("P-MUG", category="mugs"))
    # when
    pages = every_page(lambda cursor: store.list_products_in_category("t-shirts", 2, cursor))
    # then
    assert [[p.product_id for p in page] for page in pages] == [["P-A", "P-B"], ["P-C", "P-D"], ["P-E"]]


def test_a_product_moved_to_another_category_is_listed_there_only(store: Commerce) -> None:
    # given
    store.add_product(product("P-RED-TSHIRT", category="t-shirts"))
    # when
    store.update_product("P-RED-TSHIRT", 1, {"category": "sale"}, LATER)
    # then
    assert store.list_products_in_category("t-shirts", 10, None).items == []
    assert [p.product_id for p in store.list_products_in_category("sale", 10, None).items] == ["P-RED-TSHIRT"]


def test_a_category_cursor_is_refused_by_another_category(store: Commerce) -> None:
    # given
    for product_id in ("P-A", "P-B"):
        store.add_product(product(product_id, category="t-shirts"))
    cursor = store.list_products_in_category("t-shirts", 1, None).next_cursor
    # when / then
    with pytest.raises(InvalidCursor):
        store.list_products_in_category("mugs", 1, cursor)
    with pytest.raises(InvalidCursor):
        store.list_products_in_category("t-shirts", 1, "not-a-cursor")


def restocked(product_id: str, quantity: int, at: str = "2026-03-05T10:00:00.000Z") -> Restocked:
    return Restocked(product_id=product_id, quantity_added=quantity, restocked_at=at)


def test_a_restock_adds_stock_once_per_idempotency_key(store: Commerce) -> None:
    # given
    store.add_product(product("P-RED-TSHIRT", available=1))
    request = key_for("U-ADMIN", "restock-1", "restock:P-RED-TSHIRT", {"quantity": 5})
    first = restocked("P-RED-TSHIRT", 5)
    # when
    answered = store.restock("P-RED-TSHIRT", 5, request, first, NOW)
    again = store.restock("P-RED-TSHIRT", 5, request, restocked("P-RED-TSHIRT", 5, at="later"), NOW)
    # then
    assert answered == Created(first)
    assert again == Created(first, replayed=True)
    assert available(store, "P-RED-TSHIRT") == 6


def test_a_restock_key_reused_for_another_body_is_refused(store: Commerce) -> None:
    # given
    store.add_product(product("P-RED-TSHIRT", available=1))
    response = restocked("P-RED-TSHIRT", 5)
    store.restock("P-RED-TSHIRT", 5, key_for("U-ADMIN", "k", "restock:P-RED-TSHIRT", {"quantity": 5}), response, NOW)
    # when
    with pytest.raises(IdempotencyKeyReused):
        store.restock(
            "P-RED-TSHIRT", 7, key_for("U-ADMIN", "k", "restock:P-RED-TSHIRT", {"quantity": 7}), response, NOW
        )
    # then
    assert available(store, "P-RED-TSHIRT") == 6


def test_restocking_a_missing_product_is_not_found_and_keeps_the_key_unused(store: Commerce) -> None:
    # given
    request = key_for("U-ADMIN", "k", "restock:P-LATE", {"quantity": 5})
    response = restocked("P-LATE", 5)
    with pytest.raises(NotFound) as missing:
        store.restock("P-LATE", 5, request, response, NOW)
    store.add_product(product("P-LATE", available=0))
    # when
    answered = store.restock("P-LATE", 5, request, response, NOW)
    # then
    assert (missing.value.kind, missing.value.ident) == ("product", "P-LATE")
    assert not answered.replayed
    assert available(store, "P-LATE") == 5


# -- placing orders ---------------------------------------------------------------------------


def test_a_placed_order_is_stored_with_its_lines_stock_and_outbox_event(backend: Backend) -> None:
    # given
    store = backend.store
    shirt, mug = stocked(store, product("P-SHIRT", available=5), product("P-MUG", available=3, price=euros(899)))
    placed, event, request = placement(order([line_of(shirt, 2), line_of(mug, 3)]))
    # when
    answered = store.place_order(placed, event, request, NOW)
    # then
    assert bare_created(answered) == Created(placed)
    assert bare(store.get_order(placed.order_id)) == placed
    assert available(store, "P-SHIRT") == 3
    assert available(store, "P-MUG") == 0
    assert backend.outbox() == [event]


def test_a_repeated_key_with_the_same_request_answers_the_first_response_and_writes_nothing(
    backend: Backend,
) -> None:
    # given
    store = backend.store
    (shirt,) = stocked(store, product("P-SHIRT", available=5))
    first = placement(order([line_of(shirt, 2)]), key="order-1")
    store.place_order(*first, NOW)
    retry = placement(order([line_of(shirt, 2)]), key="order-1")
    # when
    answered = store.place_order(*retry, NOW)
    # then
    assert bare_created(answered) == Created(first.order, replayed=True)
    assert store.get_order(retry.order.order_id) is None
    assert available(store, "P-SHIRT") == 3
    assert backend.outbox() == [first.event]


def test_a_repeated_key_with_another_request_is_refused(backend: Backend) -> None:
    # given
    store = backend.store
    (shirt,) = stocked(store, product("P-SHIRT", available=5))
    store.place_order(*placement(order([line_of(shirt, 2)]), key="order-1"), NOW)
    # when
    with pytest.raises(IdempotencyKeyReused) as refused:
        store.place_order(*placement(order([line_of(shirt, 1)]), key="order-1"), NOW)
    # then
    assert refused.value.key == "order-1"
    assert available(store, "P-SHIRT") == 3
    assert len(backend.outbox()) == 1


def test_an_idempotency_key_is_shared_by_a_users_operations_but_not_across_users(store: Commerce) -> None:
    # given
    (shirt,) = stocked(store, product("P-SHIRT", available=5))
    store.restock("P-SHIRT", 1, key_for("U100", "k", "restock:P-SHIRT"), restocked("P-SHIRT", 1), NOW)
    # when
    with pytest.raises(IdempotencyKeyReused):
        store.place_order(*placement(order([line_of(shirt)], user_id="U100"), key="k"), NOW)
    someone_else = store.place_order(*placement(order([line_of(shirt)], user_id="U200"), key="k"), NOW)
    # then
    assert not someone_else.replayed


def test_unknown_products_are_all_named_before_any_stock_problem_and_nothing_is_written(backend: Backend) -> None:
    # given
    store = backend.store
    (shirt,) = stocked(store, product("P-SHIRT", available=1))
    lines = [("P-GHOST", 1, euros(100)), line_of(shirt, 5), ("P-PHANTOM", 1, euros(100))]
    # when
    with pytest.raises(UnknownProducts) as refused:
        store.place_order(*placement(order(lines)), NOW)
    # then
    assert refused.value.product_ids == ["P-GHOST", "P-PHANTOM"]
    assert available(store, "P-SHIRT") == 1
    assert store.list_orders_of_user("U100", 10, None).items == []
    assert backend.outbox() == []


def test_short_stock_names_every_short_product_and_nothing_is_written(backend: Backend) -> None:
    # given
    store = backend.store
    shirt, mug, cap = stocked(
        store, product("P-SHIRT", available=1), product("P-MUG", available=9), product("P-CAP", available=0)
    )
    placed, event, request = placement(order([line_of(shirt, 2), line_of(mug, 3), line_of(cap, 1)]))
    # when
    with pytest.raises(InsufficientStock) as refused:
        store.place_order(placed, event, request, NOW)
    # then
    assert refused.value.shortages == [StockShortage("P-SHIRT", 2, 1), StockShortage("P-CAP", 1, 0)]
    assert [available(store, p) for p in ("P-SHIRT", "P-MUG", "P-CAP")] == [1, 9, 0]
    assert store.get_order(placed.order_id) is None
    assert backend.outbox() == []


def test_a_changed_price_refuses_the_order_unless_stock_is_short_too(store: Commerce) -> None:
    # given
    shirt, mug = stocked(store, product("P-SHIRT", available=5), product("P-MUG", available=0))
    quoted = euros(shirt.price.amount - 100)
    # when
    with pytest.raises(PriceChanged) as repriced:
        store.place_order(*placement(order([("P-SHIRT", 1, quoted)])), NOW)
    with pytest.raises(InsufficientStock):
        store.place_order(*placement(order([("P-SHIRT", 1, quoted), line_of(mug, 1)])), NOW)
    # then
    [change] = repriced.value.changes
    assert (change.product_id, change.quoted, change.current) == (
        "P-SHIRT",
        quoted.model_dump(),
        shirt.price.model_dump(),
    )
    assert available(store, "P-SHIRT") == 5


def test_a_refused_order_leaves_its_key_free_for_the_retry(store: Commerce) -> None:
    # given
    (shirt,) = stocked(store, product("P-SHIRT", available=0))
    attempt = placement(order([line_of(shirt, 2)]), key="order-1")
    with pytest.raises(InsufficientStock):
        store.place_order(*attempt, NOW)
    store.restock("P-SHIRT", 2, key_for("U-ADMIN", "restock-1"), restocked("P-SHIRT", 2), NOW)
    # when
    answered = store.place_order(*attempt, NOW)
    # then
    assert not answered.replayed
    assert bare(store.get_order(attempt.order.order_id)) == attempt.order


def test_an_order_of_the_maximum_line_count_fits_one_transaction(store: Commerce) -> None:
    # given
    catalog = [product(f"P-{n:03d}", available=1) for n in range(MAX_ORDER_LINES)]
    placed = order([line_of(item) for item in stocked(store, *catalog)])
    # when
    store.place_order(*placement(placed), NOW)
    # then
    assert bare(store.get_order(placed.order_id)) == placed
    assert {available(store, p.product_id) for p in catalog} == {0}


# -- reading orders ---------------------------------------------------------------------------


def test_a_missing_order_reads_as_none(store: Commerce) -> None:
    assert store.get_order(order([("P-SHIRT", 1, euros(1))]).order_id) is None


def test_order_lines_are_listed_by_line_number_to_their_owner_only(store: Commerce) -> None:
    # given
    catalog = stocked(store, *(product(f"P-{n}", available=5) for n in range(5)))
    placed = order([line_of(item) for item in catalog], user_id="U100")
    store.place_order(*placement(placed), NOW)
    # when
    owners_pages = every_page(lambda cursor: store.list_order_lines(placed.order_id, "U100", 2, cursor))
    anyones = store.list_order_lines(placed.order_id, None, 10, None)
    strangers = store.list_order_lines(placed.order_id, "U200", 10, None)
    # then
    assert [[line.line_no for line in page] for page in owners_pages] == [[1, 2], [3, 4], [5]]
    assert [line.model_copy(update={"takes": ()}) for line in anyones.items] == list(placed.lines)
    assert (strangers.items, strangers.next_cursor) == ([], None)


def test_an_order_lines_cursor_is_bound_to_the_order_and_the_owner_filter(store: Commerce) -> None:
    # given
    catalog = stocked(store, *(product(f"P-{n}", available=5) for n in range(3)))
    first, second = order([line_of(item) for item in catalog]), order([line_of(item) for item in catalog])
    for placed in (first, second):
        store.place_order(*placement(placed), NOW)
    cursor = store.list_order_lines(first.order_id, None, 1, None).next_cursor
    # when / then
    with pytest.raises(InvalidCursor):
        store.list_order_lines(second.order_id, None, 1, cursor)
    with pytest.raises(InvalidCursor):
        store.list_order_lines(first.order_id, "U100", 1, cursor)


def test_a_users_orders_are_listed_newest_first_in_pages(store: Commerce) -> None:
    # given
    (shirt,) = stocked(store, product("P-SHIRT", available=100))
    mine = [order([line_of(shirt)], placed=NOW - timedelta(days=d)) for d in (3, 0, 40, 1, 2)]
    for placed in [*mine, order([line_of(shirt)], user_id="U200")]:
        store.place_order(*placement(placed), NOW)
    # when
    pages = every_page(lambda cursor: store.list_orders_of_user("U100", 2, cursor))
    # then
    newest_first = sorted(mine, key=lambda o: o.placed_at, reverse=True)
    assert [len(page) for page in pages] == [2, 2, 1]
    assert [s.order_id for page in pages for s in page] == [o.order_id for o in newest_first]


def test_order_lists_that_fill_their_page_exactly_have_no_next_cursor(store: Commerce) -> None:
    # given
    (shirt,) = stocked(store, product("P-SHIRT", available=100))
    for days in (1, 2, 3):
        store.place_order(*placement(order([line_of(shirt)], placed=NOW - timedelta(days=days))), NOW)
    # when
    mine = store.list_orders_of_user("U100", 3, None)
    placed = store.list_orders_by_status(OrderStatus.PLACED, MONTH, 3, None)
    # then
    assert (len(mine.items), mine.next_cursor) == (3, None)
    assert (len(placed.items), placed.next_cursor) == (3, None)


def test_a_users_orders_cursor_is_refused_for_another_user(store: Commerce) -> None:
    # given
    (shirt,) = stocked(store, product("P-SHIRT", available=100))
    for days in (1, 2):
        store.place_order(*placement(order([line_of(shirt)], placed=NOW - timedelta(days=days))), NOW)
    cursor = store.list_orders_of_user("U100", 1, None).next_cursor
    # when / then
    with pytest.raises(InvalidCursor):
        store.list_orders_of_user("U200", 1, cursor)


def test_orders_by_status_are_one_months_newest_first_across_every_shard(store: Commerce) -> None:
    # given
    (shirt,) = stocked(store, product("P-SHIRT", available=100))
    march = [order([line_of(shirt)], user_id=f"U{n}", placed=NOW - timedelta(hours=7 * n)) for n in range(8)]
    february = order([line_of(shirt)], placed=NOW - timedelta(days=30))
    shipped = order([line_of(shirt)], status=OrderStatus.SHIPPED)
    for placed in [*march, february, shipped]:
        store.place_order(*placement(placed), NOW)
    # when
    pages = every_page(lambda cursor: store.list_orders_by_status(OrderStatus.PLACED, MONTH, 3, cursor))
    # then
    assert [len(page) for page in pages] == [3, 3, 2]
    assert [s.order_id for page in pages for s in page] == [o.order_id for o in march]
    assert {s.status for page in pages for s in page} == {OrderStatus.PLACED}


def test_an_orders_by_status_cursor_is_refused_for_another_month_or_status(store: Commerce) -> None:
    # given
    (shirt,) = stocked(store, product("P-SHIRT", available=100))
    for hours in (1, 2):
        store.place_order(*placement(order([line_of(shirt)], placed=NOW - timedelta(hours=hours))), NOW)
    cursor = store.list_orders_by_status(OrderStatus.PLACED, MONTH, 1, None).next_cursor
    # when / then
    with pytest.raises(InvalidCursor):
        store.list_orders_by_status(OrderStatus.PLACED, NEXT_MONTH, 1, cursor)
    with pytest.raises(InvalidCursor):
        store.list_orders_by_status(OrderStatus.CANCELLED, MONTH, 1, cursor)


# -- cancelling -------------------------------------------------------------------------------


def test_a_cancel_restocks_moves_the_order_to_cancelled_and_writes_its_event(backend: Backend) -> None:
    # given
    store = backend.store
    (shirt,) = stocked(store, product("P-SHIRT", available=5))
    placed = placement(order([line_of(shirt, 2)]))
    store.place_order(*placed, NOW)
    current, cancelled, cancelled_event, move = cancellation(placed.order, by="U100")
    # when
    store.cancel_order(current, cancelled, cancelled_event, move)
    # then
    assert bare(store.get_order(placed.order.order_id)) == cancelled
    assert available(store, "P-SHIRT") == 5
    assert store.list_orders_by_status(OrderStatus.PLACED, MONTH, 10, None).items == []
    [listed] = store.list_orders_by_status(OrderStatus.CANCELLED, MONTH, 10, None).items
    assert (listed.order_id, listed.status) == (placed.order.order_id, OrderStatus.CANCELLED)
    assert store.list_orders_of_user("U100", 10, None).items == [listed]
    assert backend.outbox() == sorted([placed.event, cancelled_event], key=lambda e: e.event_id)


@pytest.mark.parametrize(
    "what_the_canceller_read",
    [
        pytest.param({"version": 2}, id="another-version"),
        pytest.param({"status": OrderStatus.PAID}, id="another-status"),
    ],
)
def test_a_cancel_of_an_order_that_moved_since_it_was_read_is_stale_and_writes_nothing(
    backend: Backend, what_the_canceller_read: dict[str, object]
) -> None:
    # given
    store = backend.store
    (shirt,) = stocked(store, product("P-SHIRT", available=5))
    placed = order([line_of(shirt, 2)])
    store.place_order(*placement(placed), NOW)
    read = placed.model_copy(update=what_the_canceller_read)
    # when
    with pytest.raises(StaleVersion) as refused:
        store.cancel_order(*cancellation(read, by="U100"))
    # then the refusal names the version stored now (a 412 never answers a null version)
    assert (refused.value.kind, refused.value.ident) == ("order", placed.order_id)
    assert refused.value.current_version == placed.version
    assert bare(store.get_order(placed.order_id)) == placed
    assert available(store, "P-SHIRT") == 3
    assert len(backend.outbox()) == 1


def test_an_orders_history_lists_its_moves_oldest_first_for_its_owner_only(store: Commerce) -> None:
    # given
    (shirt,) = stocked(store, product("P-SHIRT", available=5))
    placed = placement(order([line_of(shirt, 2)]))
    store.place_order(*placed, NOW)
    current, cancelled, cancelled_event, move = cancellation(placed.order, by="U100")
    store.cancel_order(current, cancelled, cancelled_event, move)
    order_id = placed.order.order_id
    # when
    pages = every_page(lambda cursor: store.list_order_history(order_id, "U100", 1, cursor))
    # then
    assert [[(m.version, m.from_status, m.to_status, m.by) for m in page] for page in pages] == [
        [(1, None, OrderStatus.PLACED, "U100")],
        [(2, OrderStatus.PLACED, OrderStatus.CANCELLED, "U100")],
    ]
    assert store.list_order_history(order_id, None, 10, None).items[1] == move
    assert store.list_order_history(order_id, "U-OTHER", 10, None).items == []


def test_cancelling_a_missing_order_is_not_found(store: Commerce) -> None:
    with pytest.raises(NotFound):
        store.cancel_order(*cancellation(order([("P-SHIRT", 1, euros(100))]), by="U100"))
