"""The order indexes grew from 4 write shards to 16 (decision 228), on moto: entries written under the
old count (shards 0-3) are still read by every reader of the four indexes, beside the ones written
under the new count, and none is read twice."""

from datetime import UTC, datetime

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, line, placed_order
from shopfeed.commerce import items, keys
from shopfeed.commerce.archive.repository import ArchiveRepository
from shopfeed.commerce.orders.repository import ExpiryRepository
from shopfeed.platform import clients, dynamo

TABLE = "CommerceTable"
OLD_COUNT = 4
SHARDED = ("ORDER_STATUS_SHARDS", "OUTBOX_SHARDS", "ORDER_AGE_SHARDS", "UNPAID_ORDER_SHARDS")


@pytest.fixture
def orders(admin: ApiClient, monkeypatch: pytest.MonkeyPatch) -> tuple[set[str], set[str]]:
    """12 orders placed while the four indexes had 4 shards, then 12 under today's count."""
    create_product(admin, "P-RED-TSHIRT", available=100)
    with monkeypatch.context() as old:
        for name in SHARDED:
            old.setattr(keys, name, OLD_COUNT)
        before = {placed_order(admin, line("P-RED-TSHIRT"))["order_id"] for _ in range(12)}
    after = {placed_order(admin, line("P-RED-TSHIRT"))["order_id"] for _ in range(12)}
    return before, after


def test_entries_written_under_four_shards_are_read_beside_those_written_under_sixteen(
    ops: ApiClient, orders: tuple[set[str], set[str]]
) -> None:
    before, after = orders
    table = dynamo.Table(clients.dynamodb(), TABLE)
    assert all(getattr(keys, name) == 16 for name in SHARDED)

    # the old entries sit in shards 0-3 of each index, the new ones spread past them
    status = _entries(table, keys.ORDERS_BY_STATUS, [keys.status_partition("Placed", _month(), n) for n in range(16)])
    assert {shard for shard, order_id in status if order_id in before} <= set(range(OLD_COUNT))
    assert any(shard >= OLD_COUNT for shard, order_id in status if order_id in after)

    # ECOM-005: every order placed, old and new, on the pages of the month, each once
    listed: list[str] = []
    cursor = None
    for _ in range(20):
        answer = ops.get("/orders", query={"status": "Placed", "month": _month(), "limit": 5, "cursor": cursor})
        assert answer.status == 200, answer.text
        listed += [order["order_id"] for order in answer.json["items"]]
        cursor = answer.json["next_cursor"]
        if cursor is None:
            break
    assert sorted(listed) == sorted(before | after)

    # the payment-window sweeper's unpaid index, shard by shard
    store = ExpiryRepository(table)
    unpaid = [order_id for shard in range(16) for _, order_id in store.placed_before("9999-01-01T00:00:00Z", shard)]
    assert sorted(unpaid) == sorted(before | after)

    # the archive's age index, merged
    aged = [candidate.order_id for candidate in ArchiveRepository(table).old_orders("9999-01-01T00:00:00Z")]
    assert sorted(aged) == sorted(before | after)

    # the outbox sweeper's unpublished index: one OrderPlaced event per order, from every partition
    assert len(items.OUTBOX.partitions) == 16
    unpublished = _entries(table, keys.UNPUBLISHED_OUTBOX, list(items.OUTBOX.partitions))
    assert len(unpublished) == len(before | after)
    assert {shard for shard, _ in unpublished} - set(range(OLD_COUNT))


def _month() -> str:
    return datetime.now(UTC).strftime("%Y-%m")


def _entries(table: dynamo.Table, index: dynamo.IndexSpec, partitions: list[str]) -> list[tuple[int, str]]:
    """(shard, order id or event key) of every entry in ``partitions`` of ``index``."""
    found = []
    for shard, partition in enumerate(partitions):
        for raw in table.query(index, partition)["Items"]:
            item = dynamo.deserialize(raw)
            found.append((shard, str(item.get("order_id") or item["PK"])))
    return found
