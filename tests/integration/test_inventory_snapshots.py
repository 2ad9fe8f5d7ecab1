"""Inventory snapshots on moto: the daily job (every product's level, TTL, the same keys when run again)
and GET /inventory/snapshots (ops, paged by product id, signed cursor)."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from functions.inventory_snapshot import app as snapshot_function
from local.harness.apigw import sample
from local.harness.client import ApiClient
from local.harness.factories import create_products, idempotency_key, pages
from local.harness.tables import table_items
from shopfeed.commerce import bootstrap, items, keys
from shopfeed.commerce.models import DEFAULT_WAREHOUSE, InventoryLevel
from shopfeed.platform import dynamo
from shopfeed.platform.clock import epoch_seconds, iso
from tests.support.archive import SNAPSHOT, ScheduledContext
from tests.support.calls import dynamodb_calls
from tests.support.catalog import catalog, put_items
from tests.support.expiry import reads_at

TABLE = "CommerceTable"
NOON = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DAY = "2026-11-22"


@pytest.fixture
def at_noon(monkeypatch: pytest.MonkeyPatch) -> list[datetime]:
    """The snapshot function's clock, on 2026-11-22 at noon (tests move it)."""
    now = [NOON]
    monkeypatch.setattr(snapshot_function, "utc_now", lambda: now[0])
    return now


def take() -> dict[str, Any]:
    return dict(
        snapshot_function.lambda_handler(sample("schedules/inventory_snapshot.json"), ScheduledContext(SNAPSHOT))
    )


def snapshot_items() -> list[dict[str, Any]]:
    return [item for item in table_items(TABLE) if item["entity_type"] == items.INVENTORY_SNAPSHOT]


def test_the_snapshot_holds_every_products_level_on_the_day_with_a_ttl(
    aws: None, admin: ApiClient, at_noon: list[datetime]
) -> None:
    # given 250 products, and a restock and an order that moved two levels
    put_items(TABLE, catalog(250))
    assert admin.post("/products/P-00007/stock", {"quantity": 5}, headers=idempotency_key()).status == 201
    level = {item["product_id"]: item["available"] for item in catalog(250)} | {
        "P-00007": catalog(8)[7]["available"] + 5
    }

    # when the day's snapshot is taken
    with dynamodb_calls() as calls:
        report = take()

    # then there is one item per product with its level, kept 90 days (TTL), in the day's partition
    snapshot = snapshot_items()
    assert report == {"day": DAY, "products": 250}
    assert {item["product_id"]: item["available"] for item in snapshot} == level
    assert {item["PK"] for item in snapshot} == {keys.snapshot_partition(DAY)}
    assert {item["expires_at"] for item in snapshot} == {epoch_seconds(NOON + timedelta(days=90))}
    assert {item["taken_at"] for item in snapshot} == {iso(NOON)}

    # and per page of 100 products: one index Query, one BatchGetItem of their stock layouts, one of
    # their items (these products keep their number there: not backfilled), the writes 25 a call
    assert calls.counts() == {"Query": 3, "BatchGetItem": 3 + 3, "BatchWriteItem": 4 + 4 + 2}


def test_taking_the_snapshot_again_the_same_day_writes_the_same_items_with_the_later_levels(
    aws: None, admin: ApiClient, at_noon: list[datetime]
) -> None:
    # given the day's snapshot of 3 products, then a restock
    create_products(admin, 3, available=10)
    take()
    assert admin.post("/products/P-ITEM-02/stock", {"quantity": 4}, headers=idempotency_key()).status == 201

    # when the snapshot is taken again that day (a retry, or by hand), and the next day
    at_noon[0] = NOON + timedelta(hours=6)
    take()
    at_noon[0] = NOON + timedelta(days=1)
    take()

    # then the day still has one item per product, with the later level; the next day has its own
    by_day: dict[str, dict[str, int]] = {}
    for item in snapshot_items():
        by_day.setdefault(item["day"], {})[item["product_id"]] = item["available"]
    assert by_day == {
        DAY: {"P-ITEM-01": 10, "P-ITEM-02": 14, "P-ITEM-03": 10},
        "2026-11-23": {"P-ITEM-01": 10, "P-ITEM-02": 14, "P-ITEM-03": 10},
    }


def test_a_product_without_catalog_keys_is_not_in_the_snapshot(aws: None, at_noon: list[datetime]) -> None:
    # given a product stored before the Catalog index existed (no catalog keys), and one after
    old, new = catalog(2)
    index = keys.CATALOG_INDEX
    put_items(TABLE, [{k: v for k, v in old.items() if k not in (index.partition_key, index.sort_key)}, new])

    # when
    take()

    # then only the indexed one is in the snapshot: a backfill gives the others their keys
    assert [item["product_id"] for item in snapshot_items()] == [new["product_id"]]


# -- GET /inventory/snapshots ----------------------------------------------------------------------


def test_ops_read_a_days_snapshot_in_product_id_order_a_page_at_a_time(
    aws: None, ops: ApiClient, at_noon: list[datetime]
) -> None:
    # given the day's snapshot of 7 products
    put_items(TABLE, catalog(7))
    take()

    # when ops read it 3 a page
    with dynamodb_calls() as calls:
        walked = list(pages(ops, "/inventory/snapshots", date=DAY, limit=3))

    # then every product once, in id order, on 3 pages, one Query each; the last page has no cursor
    assert [len(page["items"]) for page in walked] == [3, 3, 1]
    assert [item["product_id"] for page in walked for item in page["items"]] == [f"P-{n:05d}" for n in range(7)]
    assert {page["date"] for page in walked} == {DAY}
    assert walked[0]["items"][0] == {
        "product_id": "P-00000",
        "available": catalog(1)[0]["available"],
        "taken_at": iso(NOON),
        "warehouses": {DEFAULT_WAREHOUSE: catalog(1)[0]["available"]},
    }
    assert calls.counts() == {"Query": 3}


def test_a_snapshot_past_its_ttl_is_not_listed_though_ttl_has_not_deleted_it(
    aws: None, ops: ApiClient, at_noon: list[datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given the day's snapshot of 3 products
    put_items(TABLE, catalog(3))
    take()
    [stored] = {item["expires_at"] for item in snapshot_items()}
    # when read after its retention, before TTL deleted it
    reads_at(monkeypatch, lambda: datetime.fromtimestamp(stored, UTC))
    answer = ops.get("/inventory/snapshots", query={"date": DAY})
    # then the day has no snapshot any more, though its items are still stored
    assert (answer.status, answer.json["items"]) == (200, [])
    assert len(snapshot_items()) == 3


def test_a_day_without_a_snapshot_is_an_empty_list(aws: None, ops: ApiClient) -> None:
    answer = ops.get("/inventory/snapshots", query={"date": "2026-01-01"})
    assert (answer.status, answer.json) == (200, {"date": "2026-01-01", "items": [], "next_cursor": None})


def test_only_ops_read_snapshots(aws: None, commerce_api: ApiClient, admin: ApiClient) -> None:
    for client in (commerce_api, admin):
        answer = client.get("/inventory/snapshots", query={"date": DAY})
        assert answer.status == 403
        assert answer.json["type"].endswith("/forbidden")


@pytest.mark.parametrize(
    "day", ["2026-02-30", "2026-13-01", "22-11-2026", "yesterday", "0", "1764000000", "2026-11-22T00:00"]
)
def test_a_day_that_is_no_date_is_refused_before_anything_is_read(aws: None, ops: ApiClient, day: str) -> None:
    with dynamodb_calls() as calls:
        answer = ops.get("/inventory/snapshots", query={"date": day})
    assert answer.status == 422
    assert answer.content_type == "application/problem+json"
    assert len(calls) == 0


def test_a_cursor_of_another_day_or_an_edited_one_is_refused(
    aws: None, ops: ApiClient, at_noon: list[datetime]
) -> None:
    # given a cursor of the day's first page
    put_items(TABLE, catalog(3))
    take()
    cursor = ops.get("/inventory/snapshots", query={"date": DAY, "limit": 1}).json["next_cursor"]

    # then another day's query, or the cursor edited, is refused
    for query in ({"date": "2026-11-21", "cursor": cursor}, {"date": DAY, "cursor": cursor[:-2] + "xx"}):
        answer = ops.get("/inventory/snapshots", query=query)
        assert answer.status == 400
        assert answer.json["type"].endswith("/invalid-cursor")


def test_a_snapshot_item_maps_back_to_the_level_it_stores() -> None:
    level = items.inventory_level_from(
        dynamo.deserialize(
            dynamo.serialize(
                items.snapshot_item(
                    DAY,
                    InventoryLevel(product_id="P-MUG", available=3, taken_at=iso(NOON), warehouses={"MAIN": 3}),
                    1,
                )
            )
        )
    )
    assert level.model_dump() == {
        "product_id": "P-MUG",
        "available": 3,
        "taken_at": iso(NOON),
        "warehouses": {"MAIN": 3},
    }


def test_the_snapshot_records_each_products_units_per_warehouse(
    aws: None, admin: ApiClient, at_noon: list[datetime]
) -> None:
    # given a product with 10 units over two buckets in MAIN and 7 in WH-EAST
    create_products(admin, 1, available=10)
    stock = bootstrap.repository().stock
    stock.adjust_warehouse("P-ITEM-01", DEFAULT_WAREHOUSE, 1, restock=0, buckets=2)
    stock.adjust_warehouse("P-ITEM-01", "WH-EAST", 2, restock=7, buckets=None)

    # when the day's snapshot is taken
    take()

    # then its item holds the total and each warehouse's units
    [item] = snapshot_items()
    assert (item["available"], item["warehouses"]) == (17, {DEFAULT_WAREHOUSE: 10, "WH-EAST": 7})
