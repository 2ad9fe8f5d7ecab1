"""Stock as items on moto (issue 18): a product's stock lives in bucket items with their own partition
keys, the layout is data, moves and resizes keep every unit, a price change reaches every bucket."""

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, if_match, money
from shopfeed.commerce import keys
from shopfeed.commerce.errors import BucketShort
from shopfeed.commerce.inventory.stock import StockRepository
from shopfeed.commerce.models import DEFAULT_WAREHOUSE, BucketRef
from shopfeed.platform import clients, dynamo
from shopfeed.platform.errors import NotFound, StaleVersion
from tests.support.calls import dynamodb_calls

TABLE = "CommerceTable"


@pytest.fixture
def stock(aws: None) -> StockRepository:
    return StockRepository(dynamo.Table(clients.dynamodb(), TABLE))


def units(stock: StockRepository, product_id: str) -> dict[tuple[str, int], int]:
    return {(level.warehouse, level.bucket): level.available for level in stock.levels(product_id)}


def test_a_new_product_keeps_its_stock_in_one_bucket_of_the_default_warehouse(
    admin: ApiClient, stock: StockRepository
) -> None:
    # when a product is created with 10 units
    create_product(admin, "P-RED-TSHIRT", available=10)

    # then its layout is one bucket in the default warehouse, which holds the 10 units, in its own
    # partition; the product item holds no stock
    layout = stock.layout("P-RED-TSHIRT")
    assert layout.warehouses == {DEFAULT_WAREHOUSE: 1}
    assert layout.version == 1
    assert units(stock, "P-RED-TSHIRT") == {(DEFAULT_WAREHOUSE, 0): 10}
    table = dynamo.Table(clients.dynamodb(), TABLE)
    bucket = table.get(keys.stock_bucket("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 0))
    assert bucket is not None
    assert bucket["PK"] != keys.product("P-RED-TSHIRT")["PK"]
    assert "available" not in (table.get(keys.product("P-RED-TSHIRT")) or {})
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == 10


def test_a_resize_spreads_a_warehouses_units_over_its_buckets_and_keeps_every_unit(
    admin: ApiClient, stock: StockRepository
) -> None:
    # given a product with 100 units in one bucket
    create_product(admin, "P-RED-TSHIRT", available=100)

    # when the default warehouse is split into 4 buckets and a second warehouse gets 6 and 30 units
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=0, buckets=4)
    layout, written = stock.adjust_warehouse("P-RED-TSHIRT", "WH-EAST", 2, restock=30, buckets=6)

    # then each warehouse's units are spread evenly, none made or lost, and the layout moved twice
    assert layout.warehouses == {DEFAULT_WAREHOUSE: 4, "WH-EAST": 6}
    assert layout.version == 3
    assert units(stock, "P-RED-TSHIRT") == {
        **{(DEFAULT_WAREHOUSE, n): 25 for n in range(4)},
        **{("WH-EAST", n): 5 for n in range(6)},
    }
    assert [level.available for level in written] == [5] * 6

    # and shrinking back to 3 buckets deletes the fourth and moves its units to the others
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 3, restock=0, buckets=3)
    levels = units(stock, "P-RED-TSHIRT")
    assert {k: v for k, v in levels.items() if k[0] == DEFAULT_WAREHOUSE} == {
        (DEFAULT_WAREHOUSE, 0): 34,
        (DEFAULT_WAREHOUSE, 1): 33,
        (DEFAULT_WAREHOUSE, 2): 33,
    }
    assert dynamo.Table(clients.dynamodb(), TABLE).get(keys.stock_bucket("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 3)) is None


def test_a_resize_at_a_stale_layout_version_changes_nothing(admin: ApiClient, stock: StockRepository) -> None:
    # given a product whose layout moved to version 2
    create_product(admin, "P-RED-TSHIRT", available=10)
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=0, buckets=2)

    # when a resize names version 1, then it is refused with the version stored, and nothing moved
    with pytest.raises(StaleVersion):
        stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=5, buckets=5)
    assert units(stock, "P-RED-TSHIRT") == {(DEFAULT_WAREHOUSE, 0): 5, (DEFAULT_WAREHOUSE, 1): 5}


def test_a_move_takes_from_one_bucket_and_adds_to_another_in_one_transaction(
    admin: ApiClient, stock: StockRepository
) -> None:
    # given 10 units over two buckets
    create_product(admin, "P-RED-TSHIRT", available=10)
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=0, buckets=2)
    first, second = BucketRef(warehouse=DEFAULT_WAREHOUSE, bucket=0), BucketRef(warehouse=DEFAULT_WAREHOUSE, bucket=1)

    # when 4 units move from the first to the second
    stock.move("P-RED-TSHIRT", first, second, 4)

    # then the first holds 1 and the second 9
    assert units(stock, "P-RED-TSHIRT") == {(DEFAULT_WAREHOUSE, 0): 1, (DEFAULT_WAREHOUSE, 1): 9}

    # and a move of more than the source holds is refused with its level, nothing moved
    with pytest.raises(BucketShort) as short:
        stock.move("P-RED-TSHIRT", first, second, 2)
    assert short.value.available == 1
    # and a move to a bucket the layout does not have creates none
    with pytest.raises(NotFound):
        stock.move("P-RED-TSHIRT", second, BucketRef(warehouse=DEFAULT_WAREHOUSE, bucket=7), 1)
    assert units(stock, "P-RED-TSHIRT") == {(DEFAULT_WAREHOUSE, 0): 1, (DEFAULT_WAREHOUSE, 1): 9}
    assert dynamo.Table(clients.dynamodb(), TABLE).get(keys.stock_bucket("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 7)) is None


def test_a_price_change_reaches_every_bucket(admin: ApiClient, stock: StockRepository) -> None:
    # given a product split over three buckets
    create_product(admin, "P-RED-TSHIRT", available=9, price=1999)
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=0, buckets=3)

    # when its price changes
    answer = admin.patch("/products/P-RED-TSHIRT", {"price": money(2499)}, headers=if_match('"1"'))

    # then the product, the layout and every bucket carry the new price, and the stock is untouched
    assert answer.status == 200
    assert answer.json["price"]["amount"] == 2499
    assert answer.json["available"] == 9
    table = dynamo.Table(clients.dynamodb(), TABLE)
    assert stock.layout("P-RED-TSHIRT").price.amount == 2499
    for n in range(3):
        bucket = table.get(keys.stock_bucket("P-RED-TSHIRT", DEFAULT_WAREHOUSE, n)) or {}
        assert bucket["price"]["amount"] == 2499


def test_ops_read_a_products_inventory_by_warehouse_and_bucket_with_the_layout_as_etag(
    admin: ApiClient, ops: ApiClient, stock: StockRepository
) -> None:
    # given 10 units in MAIN over two buckets and 3 in WH-EAST
    create_product(admin, "P-RED-TSHIRT", available=10)
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=0, buckets=2)
    stock.adjust_warehouse("P-RED-TSHIRT", "WH-EAST", 2, restock=3, buckets=None)

    # when ops read it
    with dynamodb_calls() as calls:
        answer = ops.get("/products/P-RED-TSHIRT/inventory")

    # then every bucket, strongly consistent, in one GetItem and one BatchGetItem
    assert answer.status == 200
    assert answer.headers["ETag"] == '"3"'
    assert answer.json == {
        "product_id": "P-RED-TSHIRT",
        "available": 13,
        "warehouses": [
            {
                "warehouse": DEFAULT_WAREHOUSE,
                "available": 10,
                "buckets": [{"bucket": 0, "available": 5}, {"bucket": 1, "available": 5}],
            },
            {"warehouse": "WH-EAST", "available": 3, "buckets": [{"bucket": 0, "available": 3}]},
        ],
    }
    assert calls.operations == ["GetItem", "BatchGetItem"]
    # and nobody else reads it
    assert admin.get("/products/P-RED-TSHIRT/inventory").status == 403


def test_an_admin_restocks_and_resizes_a_warehouse_at_the_version_read(
    admin: ApiClient, ops: ApiClient, stock: StockRepository
) -> None:
    # given a product with 10 units
    create_product(admin, "P-RED-TSHIRT", available=10)
    path = f"/products/P-RED-TSHIRT/inventory/{DEFAULT_WAREHOUSE}"

    # when an admin adds 14 units and splits the warehouse into 4 buckets at the version read
    answer = admin.put(path, {"restock": 14, "buckets": 4}, headers=if_match('"1"'))

    # then the warehouse holds 24 units, 6 in each bucket, and the inventory moved to version 2
    assert answer.status == 200, answer.text
    assert answer.headers["ETag"] == '"2"'
    assert answer.json["available"] == 24
    assert [b["available"] for b in answer.json["warehouses"][0]["buckets"]] == [6, 6, 6, 6]
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == 24

    # and the same request sent again at the old version is 412, without If-Match 428, by ops 403,
    # with a bucket count past the maximum 422: none of them changes anything
    assert admin.put(path, {"restock": 14, "buckets": 4}, headers=if_match('"1"')).status == 412
    assert admin.put(path, {"restock": 14}).status == 428
    assert ops.put(path, {"restock": 14}, headers=if_match('"2"')).status == 403
    assert admin.put(path, {"buckets": 1025}, headers=if_match('"2"')).status == 422
    assert admin.put("/products/P-NOPE/inventory/MAIN", {"restock": 1}, headers=if_match('"1"')).status == 404
    assert units(stock, "P-RED-TSHIRT") == {(DEFAULT_WAREHOUSE, n): 6 for n in range(4)}
