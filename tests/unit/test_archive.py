"""The archive's and the snapshots' pure parts: keys, batching by month, the object's layout and key,
stored items, and the snapshot job's pacing (no network)."""

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from local.harness.builders import euros, line_of, order, product
from shopfeed.commerce import items, keys
from shopfeed.commerce.archive import archiver as archive
from shopfeed.commerce.archive.repository import Candidate
from shopfeed.commerce.inventory import snapshots
from shopfeed.commerce.models import ArchiveBatch, BatchState, InventoryLevel, Order
from shopfeed.platform import dynamo
from shopfeed.platform.errors import Forbidden
from shopfeed.platform.identity import OPS, Caller
from shopfeed.platform.models import Page
from shopfeed.platform.search.rebuild import Pace

ORDER_ID = "01JQ8Z6V4C0000000000000000"


# -- keys ---------------------------------------------------------------------------------------------


def test_an_orders_age_key_sorts_by_placement_time_within_its_write_shard() -> None:
    # given
    earlier = keys.order_by_age("2026-03-05T09:59:59.999Z", "01JZZZZZZZZZZZZZZZZZZZZZZZ")
    later = keys.order_by_age("2026-03-05T10:00:00.000Z", "01J00000000000000000000000")
    # then
    index = keys.ORDERS_BY_AGE
    assert earlier[index.partition_key] == keys.age_partition(keys.order_age_shard("01JZZZZZZZZZZZZZZZZZZZZZZZ"))
    assert earlier[index.sort_key] < later[index.sort_key]
    assert {keys.order_age_shard(f"01J{n:023d}") for n in range(200)} == set(range(keys.ORDER_AGE_SHARDS))


def test_placed_before_a_moment_is_a_sort_key_bound_that_excludes_that_moment() -> None:
    key = keys.order_by_age("2026-03-05T10:00:00.000Z", ORDER_ID)[keys.ORDERS_BY_AGE.sort_key]
    assert key >= keys.placed_before("2026-03-05T10:00:00.000Z")
    assert key < keys.placed_before("2026-03-05T10:00:00.001Z")
    assert keys.placement_of(key) == ("2026-03-05T10:00:00.000Z", ORDER_ID)


def test_an_age_key_that_is_not_one_is_refused() -> None:
    with pytest.raises(ValueError, match="not an order age key"):
        keys.placement_of("2026-03-05T10:00:00.000Z")


def test_the_jobs_items_share_one_partition_and_a_days_snapshots_another() -> None:
    assert keys.archive_batch("01B")["PK"] == keys.archive_lease()["PK"] == keys.ARCHIVE
    assert keys.archive_batch("01B")["SK"].startswith(keys.ARCHIVE_BATCH)
    assert keys.snapshot("2026-11-22", "P-MUG") == {"PK": keys.snapshot_partition("2026-11-22"), "SK": "P-MUG"}


# -- items --------------------------------------------------------------------------------------------


def test_an_order_header_feeds_the_age_index_and_a_product_the_catalog() -> None:
    # given
    placed = order([line_of(product("P-MUG", price=euros(899)), 1)])
    header, shirt = items.order_item(placed), items.product_item(product("P-RED-TSHIRT"))
    # then
    assert {k: header[k] for k in ("by_age_pk", "by_age_sk")} == keys.order_by_age(placed.placed_at, placed.order_id)
    assert {k: shirt[k] for k in ("catalog_pk", "catalog_sk")} == keys.product_in_catalog("P-RED-TSHIRT")
    assert "by_age_pk" not in items.order_line_item(placed, placed.lines[0])


def test_a_manifest_round_trips_through_its_stored_item() -> None:
    batch = ArchiveBatch(
        batch_id="01B",
        month="2026-03",
        object_key=archive.object_key("2026-03", "01B"),
        order_ids=("01A", "01C"),
        state=BatchState.WRITTEN,
        md5="0" * 32,
        created_at="2026-06-10T03:00:00.000Z",
        updated_at="2026-06-10T03:00:01.000Z",
    )
    item = dynamo.deserialize(dynamo.serialize(items.archive_batch_item(batch)))
    assert item["entity_type"] == items.ARCHIVE_BATCH
    assert items.archive_batch_from(item) == batch


# -- the object ---------------------------------------------------------------------------------------


def test_an_objects_key_names_its_month_as_a_hive_partition() -> None:
    assert archive.object_key("2026-03", "01HB") == "orders/month=2026-03/01HB.jsonl"


def _candidates(*placed: str) -> Iterator[Candidate]:
    return (Candidate(placed_at, f"O{n}") for n, placed_at in enumerate(placed))


def test_batches_never_mix_months_and_hold_at_most_the_batch_size() -> None:
    # given five March orders and two April ones, oldest first
    march = [f"2026-03-0{day}T10:00:00.000Z" for day in range(1, 6)]
    april = ["2026-04-01T00:00:00.000Z", "2026-04-30T23:59:59.999Z"]

    # when batched two at a time
    batches = list(archive.plan_batches(_candidates(*march, *april), size=2))

    # then
    assert batches == [
        ("2026-03", ["O0", "O1"]),
        ("2026-03", ["O2", "O3"]),
        ("2026-03", ["O4"]),
        ("2026-04", ["O5", "O6"]),
    ]


def test_no_candidate_is_no_batch() -> None:
    assert list(archive.plan_batches(iter(()))) == []


def test_the_object_is_one_json_line_per_item_and_decodes_to_the_same_orders() -> None:
    # given two orders (one with two lines and a name in another script)
    first = order([line_of(product("P-MUG", price=euros(899)), 2)], user_id="Zoë 李")
    second = order([line_of(product("P-CAP"), 1), line_of(product("P-HAT"), 3)])
    orders = {
        o.order_id: [dynamo.deserialize(dynamo.serialize(i)) for i in (items.order_item(o), *_lines(o))]
        for o in (first, second)
    }

    # when
    body = archive.encode(orders)

    # then
    assert body.count(b"\n") == 5
    assert archive.decode(body) == orders
    assert archive.encode(archive.decode(body)) == body  # written again, byte for byte
    assert "Zoë 李" in body.decode()


def _lines(placed: Order) -> list[dynamo.Item]:
    return [items.order_line_item(placed, line) for line in placed.lines]


def test_an_item_of_a_type_json_cannot_hold_fails_the_run_instead_of_being_written_wrong() -> None:
    # A string set would come back a list: the run fails loudly (alarm) rather than archive it changed.
    with pytest.raises(TypeError):
        archive.encode({ORDER_ID: [{"PK": keys.order_partition(ORDER_ID), "SK": keys.META, "tags": {"a", "b"}}]})


# -- snapshots ----------------------------------------------------------------------------------------


class _Catalog:
    """A catalog of ``count`` products, two pages of stock levels, as the snapshot store answers."""

    def __init__(self, count: int) -> None:
        self.levels = {f"P-{n:03d}": n for n in range(count)}
        self.written: list[tuple[str, list[InventoryLevel], int]] = []

    def catalog_pages(self) -> Iterator[list[str]]:
        ids = sorted(self.levels)
        yield from (ids[start : start + 100] for start in range(0, len(ids), 100))

    def stock_levels(self, product_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        return {product_id: {"MAIN": self.levels[product_id]} for product_id in product_ids}

    def write(self, day: str, levels: Sequence[InventoryLevel], expires_at: int) -> int:
        self.written.append((day, list(levels), expires_at))
        return 1


def test_the_snapshot_is_written_no_faster_than_its_pace() -> None:
    # given 250 products, and a pace of 100 a second on a clock that does not move by itself
    store = _Catalog(250)
    clock = [0.0]
    pace = Pace(100, sleep=lambda seconds: clock.__setitem__(0, clock[0] + seconds), clock=lambda: clock[0])
    now = datetime(2026, 11, 22, 0, 5, tzinfo=UTC)

    # when
    report = snapshots.take_snapshot(store, now, timedelta(days=90), pace)

    # then the writes took at least 2.5 s (250 at 100 a second), and each day's item expires in 90 days
    assert report.counts == {"day": "2026-11-22", "products": 250}
    assert clock[0] >= 2.5 - 1.0  # the first page is not waited for
    assert [len(levels) for _, levels, _ in store.written] == [100, 100, 50]
    assert {expires for _, _, expires in store.written} == {int((now + timedelta(days=90)).timestamp())}


class _Days:
    def list_day(self, day: str, limit: int, cursor: str | None) -> Page[InventoryLevel]:
        return Page(items=[])


def test_only_ops_read_a_snapshot() -> None:
    with pytest.raises(Forbidden):
        snapshots.read_snapshot(_Days(), Caller("U100", frozenset()), "2026-11-22", 10, None)
    assert snapshots.read_snapshot(_Days(), Caller("U-OPS", frozenset({OPS})), "2026-11-22", 10, None).items == []
