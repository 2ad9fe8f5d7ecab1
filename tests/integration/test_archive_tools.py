"""The archive's operator tools on moto: the backfill of index keys for items stored before the
indexes existed, and the restore of an archived order."""

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from functions.order_archiver.app import lambda_handler as order_archiver
from local.harness.apigw import sample
from local.harness.client import ApiClient
from local.harness.factories import line, order_body
from local.harness.tables import table_items
from shopfeed.commerce import items, keys
from shopfeed.commerce.archive import backfill
from shopfeed.commerce.archive import restore as archive_restore
from shopfeed.commerce.archive.repository import ArchiveRepository
from shopfeed.commerce.inventory.stock import move_into_buckets
from shopfeed.commerce.models import OrderMove, OrderStatus
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import utc_now
from shopfeed.platform.objects import S3Objects
from shopfeed.platform.search.rebuild import Pace
from shopfeed.platform.types import Money
from tests.support.archive import (
    Bucket,
    Crash,
    ScheduledContext,
    crash_at,
    create_archive_bucket,
    days_ago,
    hot_order_items,
    old_orders,
    order_items,
    seed,
)
from tests.support.catalog import catalog, put_items

TABLE = "CommerceTable"
BUCKET = "archivebucket"
UNPACED = Pace(items_per_second=1e9, sleep=lambda _: None)


@pytest.fixture
def bucket(aws: None, monkeypatch: pytest.MonkeyPatch) -> Bucket:
    monkeypatch.setenv("ARCHIVE_BUCKET_NAME", BUCKET)
    create_archive_bucket(clients.s3(), BUCKET)
    return Bucket(clients.s3(), BUCKET)


def run() -> dict[str, Any]:
    return dict(order_archiver(sample("schedules/order_archive.json"), ScheduledContext()))


def table() -> dynamo.Table:
    return dynamo.Table(clients.dynamodb(), TABLE)


def without(item: dynamo.Item, index: dynamo.IndexSpec) -> dynamo.Item:
    return {k: v for k, v in item.items() if k not in (index.partition_key, index.sort_key)}


def hot_orders() -> set[str]:
    return {keys.parse_order_id(item["PK"]) for item in hot_order_items(clients.dynamodb(), TABLE)}


# -- backfill ---------------------------------------------------------------------------------------


def test_the_backfill_keys_what_was_stored_before_the_indexes_and_nothing_twice(bucket: Bucket) -> None:
    # given 3 old orders and 4 products stored before the indexes, and 2 of each stored after
    # (products whose stock is in buckets already: the stock move has a test of its own)
    orders = old_orders(5, days_ago(120), timedelta(hours=1))
    products = [{k: v for k, v in p.items() if k != items.LEGACY_AVAILABLE} for p in catalog(6)]
    stored = [item for order in orders for item in order_items(order)] + products
    earlier = {order.order_id for order in orders[:3]} | {product["product_id"] for product in products[:4]}
    put_items(
        TABLE,
        [
            without(without(item, keys.ORDERS_BY_AGE), keys.CATALOG_INDEX)
            if item.get("order_id", item.get("product_id")) in earlier
            else item
            for item in stored
        ],
    )

    # when
    report = backfill.backfill(table(), UNPACED)

    # then every header and product carries its keys, as a new one would be written, and only those changed
    assert report.counts == {"orders": 3, "products": 4, "skipped": 0, "stocked": 0}
    assert _same_items(stored)
    assert backfill.backfill(table(), UNPACED).counts == {"orders": 0, "products": 0, "skipped": 0, "stocked": 0}

    # and the archive now finds every old order
    assert run()["orders"] == 5
    assert hot_orders() == set()


def _key(item: dict[str, Any]) -> tuple[str, str]:
    return item["PK"], item["SK"]


def _same_items(stored: list[dynamo.Item]) -> bool:
    expected = sorted((dynamo.deserialize(dynamo.serialize(item)) for item in stored), key=_key)
    return sorted(table_items(TABLE), key=_key) == expected


def test_the_backfill_command_runs_against_a_table_by_name(aws: None, capsys: pytest.CaptureFixture[str]) -> None:
    put_items(TABLE, [without(catalog(1)[0], keys.CATALOG_INDEX)])
    assert backfill.main(["--table", TABLE, "--rate", "1000"]) == 0
    assert "0 orders and 1 products keyed, 0 skipped, 1 products' stock moved into buckets" in capsys.readouterr().out


def test_the_backfill_moves_each_products_stock_number_into_a_bucket_once(aws: None, commerce_api: ApiClient) -> None:
    # given 3 products stored with their stock on the product item, as before buckets
    products = catalog(3)
    put_items(TABLE, products)
    before = {p["product_id"]: commerce_api.get(f"/products/{p['product_id']}").json for p in products}

    # when the backfill runs, twice
    first = backfill.backfill(table(), UNPACED)
    again = backfill.backfill(table(), UNPACED)

    # then each product's number moved into one bucket of the default warehouse, once, and every
    # product reads as it did
    assert (first.stocked, again.stocked) == (3, 0)
    stored = table_items(TABLE)
    for p in products:
        [item] = [i for i in stored if _key(i) == _key(p)]
        assert items.LEGACY_AVAILABLE not in item
        [bucket] = [
            i for i in stored if i.get("entity_type") == items.STOCK_BUCKET and i["product_id"] == p["product_id"]
        ]
        assert (bucket["warehouse"], bucket["bucket"], bucket["available"]) == ("MAIN", 0, p["available"])
        assert commerce_api.get(f"/products/{p['product_id']}").json == before[p["product_id"]]


def test_an_order_of_a_product_not_yet_backfilled_is_a_409_to_retry_and_takes_nothing_until_the_backfill(
    aws: None, commerce_api: ApiClient
) -> None:
    # given a product stored with its stock on its item, as before buckets
    [stored] = catalog(1)
    put_items(TABLE, [stored])
    product_id, units = stored["product_id"], stored[items.LEGACY_AVAILABLE]
    buyer = commerce_api.as_user("U-EARLY")
    price = stored["price"]
    order = order_body(line(product_id, 1, int(price["amount"]), price["currency"]))

    # when it is ordered before the backfill ran
    refused = buyer.post("/orders", order, headers={"Idempotency-Key": "before-backfill"})

    # then the order is refused as contention (retry), and its number is left as it was
    assert refused.status == 409, refused.text
    assert refused.json["type"].endswith("/contention")
    assert commerce_api.get(f"/products/{product_id}").json["available"] == units

    # and once the backfill moved it, the same order (same key) is placed and takes one unit
    backfill.backfill(table(), UNPACED)
    placed = buyer.post("/orders", order, headers={"Idempotency-Key": "before-backfill"})
    assert placed.status == 201, placed.text
    assert commerce_api.get(f"/products/{product_id}").json["available"] == units - 1


def test_the_stock_move_of_a_product_whose_number_changed_since_it_was_read_writes_nothing(aws: None) -> None:
    # given a product stored with 5 units on its item
    [product] = catalog(1)
    put_items(TABLE, [{**product, items.LEGACY_AVAILABLE: 5}])

    # when its move names the 4 it had when read (a restock came in between), then nothing is written
    price = Money.model_validate(product["price"])
    assert not move_into_buckets(table(), product["product_id"], 4, price)
    assert [i["entity_type"] for i in table_items(TABLE)] == [items.PRODUCT]
    # and with the number it holds now, it moves
    assert move_into_buckets(table(), product["product_id"], 5, price)


# -- restore ----------------------------------------------------------------------------------------


def test_a_restored_order_is_served_again_stays_hot_and_leaves_its_object(
    bucket: Bucket, commerce_api: ApiClient
) -> None:
    # given three archived orders of U100, one of them read before it was archived
    orders = old_orders(3, days_ago(120), timedelta(hours=1), user_id="U100")
    seed(clients.dynamodb(), TABLE, orders)
    wanted = orders[1].order_id
    before = commerce_api.get(f"/orders/{wanted}").json
    run()
    (key,) = bucket.object_keys()
    assert commerce_api.get(f"/orders/{wanted}").status == 404

    # when it is restored
    restored = archive_restore.restore(wanted, ArchiveRepository(table()), S3Objects(clients.s3(), BUCKET), utc_now())

    # then the API serves it as it was, and its object holds the other two
    assert (restored.object_key, restored.put_back, restored.already_back) == (key, 2, 0)
    assert commerce_api.get(f"/orders/{wanted}").json == before
    assert bucket.header_counts() == Counter({orders[0].order_id: 1, orders[2].order_id: 1})
    assert len(bucket.versions(key)) == 2  # the object as archived is kept

    # and it stays hot: its age counts from the restore
    assert run()["orders"] == 0
    assert hot_orders() == {wanted}

    # and restoring it again finds it in no object
    with pytest.raises(archive_restore.OrderNotArchived):
        archive_restore.restore(wanted, ArchiveRepository(table()), S3Objects(clients.s3(), BUCKET), utc_now())


def test_an_order_of_an_unfinished_batch_is_not_restored_until_the_archiver_finished_it(bucket: Bucket) -> None:
    # given a run that died after writing its batch's object
    (order,) = old_orders(1, days_ago(120), timedelta(0))
    seed(clients.dynamodb(), TABLE, [order])
    with crash_at(clients.s3(), "after-call.s3.PutObject"), pytest.raises(Crash):
        run()
    store, objects = ArchiveRepository(table()), S3Objects(clients.s3(), BUCKET)

    # then the restore refuses, and once the next run finished the batch it restores the order
    with pytest.raises(archive_restore.BatchUnfinished):
        archive_restore.restore(order.order_id, store, objects, utc_now())
    run()
    assert archive_restore.restore(order.order_id, store, objects, utc_now()).put_back == 2
    assert hot_orders() == {order.order_id}


def test_the_restore_command_names_the_object_it_took_the_order_from(
    bucket: Bucket, capsys: pytest.CaptureFixture[str]
) -> None:
    (order,) = old_orders(1, days_ago(120), timedelta(0))
    seed(clients.dynamodb(), TABLE, [order])
    run()
    arguments = ["--order-id", order.order_id, "--table", TABLE, "--bucket", BUCKET]
    assert archive_restore.main(arguments) == 0
    assert bucket.object_keys()[0] in capsys.readouterr().out
    assert archive_restore.main(arguments) == 1  # no longer archived
    assert items.ORDER in {item["entity_type"] for item in hot_order_items(clients.dynamodb(), TABLE)}


def test_an_orders_status_history_leaves_with_it_and_comes_back_with_its_restore(
    bucket: Bucket, commerce_api: ApiClient
) -> None:
    # given an old order of U100 that was placed, paid and delivered, each move in its history
    (order,) = old_orders(1, days_ago(120), timedelta(0), user_id="U100")
    steps = [
        (None, OrderStatus.PLACED),
        (OrderStatus.PLACED, OrderStatus.PAID),
        (OrderStatus.PAID, OrderStatus.DELIVERED),
    ]
    history = [
        items.order_history_item(
            OrderMove.of(before, order.model_copy(update={"status": after, "version": version}), "U100", "a move")
        )
        for version, (before, after) in enumerate(steps, start=1)
    ]
    delivered = order.model_copy(update={"status": OrderStatus.DELIVERED, "version": len(steps)})
    seed(clients.dynamodb(), TABLE, [delivered], extra=history)
    before = commerce_api.get(f"/orders/{order.order_id}/history").json

    # when it is archived
    run()

    # then its history is in the object and gone from the table (the history answers 404 as the order does)
    archived = [line for line in bucket.items() if line["entity_type"] == items.ORDER_HISTORY]
    assert sorted(line["SK"] for line in archived) == sorted(item["SK"] for item in history)
    assert [i for i in table_items() if i["entity_type"] == items.ORDER_HISTORY] == []
    assert commerce_api.get(f"/orders/{order.order_id}/history").status == 404

    # and a restore brings it back as it was
    archive_restore.restore(order.order_id, ArchiveRepository(table()), S3Objects(clients.s3(), BUCKET), utc_now())
    after = commerce_api.get(f"/orders/{order.order_id}/history").json
    assert after == before
    assert [m["to_status"] for m in after["items"]] == ["Placed", "Paid", "Delivered"]
