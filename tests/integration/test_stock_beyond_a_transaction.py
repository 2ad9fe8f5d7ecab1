"""Stock of more buckets than one transaction holds, on moto (decisions 224–227): a warehouse grows and
shrinks in steps and keeps every unit, a price change reaches every bucket sealed then opened, a price
change cut short leaves no bucket selling the new price until it is finished, and the order path
guesses a few buckets before it reads them all."""

import uuid
from collections.abc import Iterator

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, if_match, line, money, place_order
from shopfeed.commerce import items, keys
from shopfeed.commerce.catalog import repository as catalog_repository
from shopfeed.commerce.inventory import stock as stock_module
from shopfeed.commerce.inventory.stock import StockRepository
from shopfeed.commerce.models import DEFAULT_WAREHOUSE
from shopfeed.commerce.orders import services
from shopfeed.commerce.orders.repository import CommerceRepository
from shopfeed.platform import clients, dynamo
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.dynamo import Update
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.identity import Caller
from shopfeed.platform.types import Money
from tests.support.calls import dynamodb_calls

TABLE = "CommerceTable"
PRODUCT = "P-FLASH"


@pytest.fixture(autouse=True)
def _no_time_budget() -> Iterator[None]:
    """A price change here has all the time it needs: 200 buckets on moto ran past the 5 s budget on a
    loaded machine, and only the test of the budget is about it (it sets its own, over this one)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stock_module, "REPRICE_BUDGET_S", float("inf"))
        patch.setattr(catalog_repository, "REPRICE_BUDGET_S", float("inf"))
        yield


@pytest.fixture
def table(aws: None) -> dynamo.Table:
    return dynamo.Table(clients.dynamodb(), TABLE)


@pytest.fixture
def stock(table: dynamo.Table) -> StockRepository:
    return StockRepository(table)


def levels(stock: StockRepository) -> dict[int, int]:
    return {level.bucket: level.available for level in stock.levels(PRODUCT)}


def buckets(table: dynamo.Table, count: int) -> list[dynamo.Item]:
    found: list[dynamo.Item] = []
    for start in range(0, count, 100):
        wanted = [keys.stock_bucket(PRODUCT, DEFAULT_WAREHOUSE, n) for n in range(start, min(count, start + 100))]
        found += table.get_many(wanted)
    return found


def test_a_warehouse_grows_past_one_transaction_in_steps_and_keeps_every_unit(
    admin: ApiClient, stock: StockRepository, table: dynamo.Table
) -> None:
    # given 1,000 units in one bucket
    create_product(admin, PRODUCT, available=1000)

    # when the warehouse is split into 512 buckets with 24 units more (more than a transaction holds)
    layout, written = stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, 1, restock=24, buckets=512)

    # then every bucket exists and holds its even share of the 1,024 units, and the answer says so
    assert layout.warehouses == {DEFAULT_WAREHOUSE: 512}
    assert stock.layout(PRODUCT).version == layout.version
    assert levels(stock) == dict.fromkeys(range(512), 2)
    assert [level.available for level in written] == [2] * 512

    # and shrinking to 100 deletes the others and keeps the 1,024 units, evened out
    stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, layout.version, restock=0, buckets=100)
    after = levels(stock)
    assert sum(after.values()) == 1024
    assert sorted(set(after.values())) == [10, 11]
    assert len(buckets(table, 512)) == 100


def test_a_pure_restock_of_a_large_warehouse_is_evened_over_every_bucket(
    admin: ApiClient, stock: StockRepository
) -> None:
    # given 300 buckets holding one unit each
    create_product(admin, PRODUCT, available=300)
    layout, _ = stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, 1, restock=0, buckets=300)

    # when 300 units are added without a resize
    stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, layout.version, restock=300, buckets=None)

    # then every bucket holds 2
    assert levels(stock) == dict.fromkeys(range(300), 2)


@pytest.fixture
def two_hundred_buckets(admin: ApiClient, stock: StockRepository) -> int:
    """400 units over 200 buckets at 19.99; the inventory's version."""
    create_product(admin, PRODUCT, available=400, price=1999)
    layout, _ = stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, 1, restock=0, buckets=200)
    return layout.version


@pytest.mark.usefixtures("two_hundred_buckets")
def test_a_price_change_over_two_hundred_buckets_reaches_every_bucket_and_opens_it(
    admin: ApiClient, stock: StockRepository, table: dynamo.Table
) -> None:
    # when the price changes
    answer = admin.patch(f"/products/{PRODUCT}", {"price": money(2499)}, headers=if_match('"1"'))

    # then every bucket carries the new price at the layout's price version, none is left sealed
    assert answer.status == 200, answer.text
    layout = stock.layout(PRODUCT)
    assert (layout.price.amount, layout.price_version, layout.repricing) == (2499, 2, False)
    found = buckets(table, 200)
    assert len(found) == 200
    assert all(b["price"]["amount"] == 2499 and b[items.PRICED] == 2 and items.SEALED not in b for b in found)

    # and an order at the old price is refused with the new one, an order at the new one is placed
    old = place_order(admin, line(PRODUCT, 1, 1999))
    assert old.status == 409
    assert old.json["type"] == "https://shopfeed.dev/problems/price-changed"
    assert place_order(admin, line(PRODUCT, 1, 2499)).status == 201
    assert sum(levels(stock).values()) == 399


@pytest.mark.usefixtures("two_hundred_buckets")
def test_a_price_change_cut_short_sells_no_unit_at_the_new_price_until_the_next_one_finishes_it(
    admin: ApiClient, stock: StockRepository, table: dynamo.Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a price change whose process stops after sealing 150 of the 200 buckets
    written = 0
    real_write = StockRepository._write_if

    def stopping(
        self: StockRepository, key: keys.Key, change: Update, condition: object, deadline: float | None = None
    ) -> bool:
        nonlocal written
        written += 1
        if written > 150:
            raise RuntimeError("the function timed out")
        return real_write(self, key, change, condition, deadline)  # type: ignore[arg-type]

    monkeypatch.setattr(StockRepository, "_write_if", stopping)
    with pytest.raises(RuntimeError):
        CommerceRepository(table, CursorCodec(b"k")).update_product(
            PRODUCT, 1, {"price": money(2499)}, "2026-01-01T00:00:00Z"
        )
    monkeypatch.setattr(StockRepository, "_write_if", real_write)
    assert stock.layout(PRODUCT).repricing

    # when orders quote the new price, then none is sold (no bucket is open at it) and nothing is taken
    new_price = place_order(admin, line(PRODUCT, 1, 2499))
    assert new_price.status == 409, new_price.text  # sealed buckets are busy, the others at the old price
    assert new_price.json["type"] in {
        "https://shopfeed.dev/problems/contention",
        "https://shopfeed.dev/problems/price-changed",
    }
    assert sum(levels(stock).values()) == 400

    # and the old price sells only from buckets not sealed yet, never one the new price has reached
    old_price = place_order(admin, line(PRODUCT, 1, 1999))
    if old_price.status == 201:
        placed = CommerceRepository(table, CursorCodec(b"k")).get_order(old_price.json["order_id"])
        assert placed is not None
        take = placed.lines[0].takes[0].bucket
        bucket = table.get(keys.stock_bucket(PRODUCT, DEFAULT_WAREHOUSE, take)) or {}
        assert bucket["price"]["amount"] == 1999
    else:
        assert old_price.json["type"] == "https://shopfeed.dev/problems/price-changed"

    # when the admin sends the price again at the product's new version, then the change is finished:
    # every bucket open at the new price, which now sells
    answer = admin.patch(f"/products/{PRODUCT}", {"price": money(2499)}, headers=if_match('"2"'))
    assert answer.status == 200, answer.text
    assert not stock.layout(PRODUCT).repricing
    assert all(b["price"]["amount"] == 2499 and items.SEALED not in b for b in buckets(table, 200))
    assert place_order(admin, line(PRODUCT, 1, 2499)).status == 201


def test_an_order_among_many_buckets_reads_none_on_a_hit_and_guesses_a_few_before_reading_all(
    admin: ApiClient, stock: StockRepository, table: dynamo.Table
) -> None:
    # given 200 buckets of which only bucket 137 holds a unit
    create_product(admin, PRODUCT, available=200, price=1999)
    stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, 1, restock=0, buckets=200)
    for n in range(200):
        table.update(keys.stock_bucket(PRODUCT, DEFAULT_WAREHOUSE, n), Update(set={"available": int(n == 137)}))
    store = CommerceRepository(table, CursorCodec(b"k"))
    stock_of = store.stock.recent_layouts([PRODUCT])  # a warm container: the layout is kept
    assert stock_of

    # when an order of one unit is placed
    request = IdempotentRequest.of("U100", uuid.uuid4().hex, "place-order", {"q": 1})
    with dynamodb_calls() as calls:
        placed = services.place_order(
            store, Caller("U100", frozenset()), request, [(PRODUCT, 1, Money(amount=1999, currency="EUR"))]
        ).value

    # then it took bucket 137 after at most 3 short guesses and one read of every bucket (2
    # BatchGetItems of 100 keys and the layout's), never a read per guess
    assert placed.lines[0].takes[0].bucket == 137
    counts = calls.counts()
    assert counts["TransactWriteItems"] <= 4
    assert counts["BatchGetItem"] <= 3
    assert levels(stock)[137] == 0


@pytest.mark.usefixtures("two_hundred_buckets")
def test_a_product_page_past_100_buckets_reads_them_once_per_container_window_and_again_after_a_resize(
    admin: ApiClient, stock: StockRepository
) -> None:
    # when its page is read twice in a row by the same container
    with dynamodb_calls() as first:
        assert admin.get(f"/products/{PRODUCT}").json["available"] == 400
    with dynamodb_calls() as second:
        assert admin.get(f"/products/{PRODUCT}").json["available"] == 400

    # then the first read the product and layout (strong) and the 200 buckets in 2 eventually consistent
    # BatchGetItems; the second, within the container's window, the product and layout alone
    assert first.counts() == {"BatchGetItem": 3}
    bucket_reads = [r for _, r in first.requests[1:]]
    assert [r["RequestItems"][next(iter(r["RequestItems"]))]["ConsistentRead"] for r in bucket_reads] == [False, False]
    assert second.counts() == {"BatchGetItem": 1}

    # and a restock (the layout's version moves) is shown at once, read again
    version = stock.layout(PRODUCT).version
    put = admin.put(
        f"/products/{PRODUCT}/inventory/{DEFAULT_WAREHOUSE}", {"restock": 10}, headers=if_match(f'"{version}"')
    )
    assert put.status == 200, put.text
    assert admin.get(f"/products/{PRODUCT}").json["available"] == 410


@pytest.mark.usefixtures("two_hundred_buckets")
def test_a_price_change_out_of_time_answers_contention_and_the_same_patch_at_the_new_etag_finishes_it(
    admin: ApiClient, stock: StockRepository, table: dynamo.Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a PATCH whose time for the buckets runs out before it starts them
    monkeypatch.setattr(catalog_repository, "REPRICE_BUDGET_S", 0.0)

    # when the price changes, then it answers 409 contention, with the product and layout at the new
    # price and no bucket written yet
    answer = admin.patch(f"/products/{PRODUCT}", {"price": money(2499)}, headers=if_match('"1"'))
    assert answer.status == 409, answer.text
    assert answer.json["type"] == "https://shopfeed.dev/problems/contention"
    assert stock.layout(PRODUCT).repricing
    assert all(b["price"]["amount"] == 1999 and items.SEALED not in b for b in buckets(table, 200))

    # when the admin sends it again at the product's new ETag (as often as it answers contention: each
    # time keeps what it wrote, on a loaded machine 400 writes may take longer than the budget), then
    # it is finished, and the buckets are written once (not a second price change)
    monkeypatch.undo()
    for _ in range(20):
        again = admin.patch(f"/products/{PRODUCT}", {"price": money(2499)}, headers=if_match('"2"'))
        if again.status != 409:
            break
    assert again.status == 200, again.text
    layout = stock.layout(PRODUCT)
    assert (layout.price_version, layout.repricing) == (2, False)
    assert all(b["price"]["amount"] == 2499 and items.SEALED not in b for b in buckets(table, 200))
