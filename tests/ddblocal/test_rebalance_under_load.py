"""Rebalance under load, on DynamoDB Local: buyers and rebalancer invocations race on the same buckets,
each in its own container, and no unit is made or lost.

A product holds 100 units over 10 buckets in 2 warehouses, drained unevenly first. Then 8 buyer
containers place 120 one-unit orders (more than the stock) while 4 rebalancer containers are handed,
again and again, the stream records of its two low buckets (Lambda's redelivery: the same batch more
than once, at once). Whatever interleaving the engine picks, the units sold plus the units left is the
initial stock, per warehouse, and no bucket goes below zero.
"""

import copy
from collections import Counter
from typing import Any

import pytest

from local.harness.apigw import sample
from local.harness.client import ApiClient
from local.harness.factories import create_product, idempotency_key, line, order_body
from local.harness.race import Call, Invoke, in_containers
from shopfeed.commerce import items, keys
from shopfeed.commerce.inventory.stock import StockRepository
from shopfeed.commerce.models import DEFAULT_WAREHOUSE, BucketRef
from shopfeed.platform import clients, dynamo
from tests.ddblocal.conftest import StoredItems

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

PRODUCT = "P-RED-TSHIRT"  # the product of the sample low-bucket record
EAST = "WH-EAST"
INITIAL = {DEFAULT_WAREHOUSE: 60, EAST: 40}
BUYERS, ORDERS_EACH = 8, 15
REBALANCERS, DELIVERIES_EACH = 4, 6


def low_bucket_records(warehouse: str, bucket: int) -> dict[str, Any]:
    """The sample record of a bucket drained to 0 (events/streams/commerce_stock_bucket_low.json), for
    ``bucket`` of ``warehouse``."""
    event = copy.deepcopy(sample("streams/commerce_stock_bucket_low.json"))
    change = event["Records"][0]["dynamodb"]
    key = dynamo.serialize(keys.stock_bucket(PRODUCT, warehouse, bucket))
    for image in (change["Keys"], change["NewImage"], change["OldImage"]):
        image.update(key)
        image.get("warehouse", {}).update({"S": warehouse})
    change["NewImage"]["bucket"] = change["OldImage"]["bucket"] = {"N": str(bucket)}
    return event


@pytest.fixture
def stock(tables: dict[str, str]) -> StockRepository:
    return StockRepository(dynamo.Table(clients.dynamodb(), tables["CommerceTable"]))


def test_orders_and_rebalances_racing_on_the_same_buckets_keep_every_unit(
    admin: ApiClient, stock: StockRepository, stored: StoredItems
) -> None:
    # given 60 units in 6 buckets and 40 in 4, each warehouse's first bucket drained into its last
    create_product(admin, PRODUCT, available=INITIAL[DEFAULT_WAREHOUSE])
    stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, 1, restock=0, buckets=6)
    stock.adjust_warehouse(PRODUCT, EAST, 2, restock=INITIAL[EAST], buckets=4)
    stock.move(
        PRODUCT, BucketRef(warehouse=DEFAULT_WAREHOUSE, bucket=0), BucketRef(warehouse=DEFAULT_WAREHOUSE, bucket=5), 10
    )
    stock.move(PRODUCT, BucketRef(warehouse=EAST, bucket=0), BucketRef(warehouse=EAST, bucket=3), 10)
    low = {"Records": [*low_bucket_records(DEFAULT_WAREHOUSE, 0)["Records"], *low_bucket_records(EAST, 0)["Records"]]}
    buyers = [
        [
            Call("POST", "/orders", order_body(line(PRODUCT)), idempotency_key(), sub=f"U-{b}-{n}")
            for n in range(ORDERS_EACH)
        ]
        for b in range(BUYERS)
    ]
    rebalancers = [[Invoke("StockRebalancerFunction", low)] * DELIVERIES_EACH for _ in range(REBALANCERS)]

    # when every container starts at once
    served = in_containers([*buyers, *rebalancers], warm_up=Call("GET", f"/products/{PRODUCT}"))

    # then the buyers were answered 201 or a refusal, the rebalancer never failed a record
    orders = [s.answer for share in served[:BUYERS] for s in share]
    assert {answer.status for answer in orders} <= {201, 409}
    rebalanced = [s.answer.json for share in served[BUYERS:] for s in share]
    assert rebalanced == [{"batchItemFailures": []}] * (REBALANCERS * DELIVERIES_EACH)

    # and every unit is accounted for: left in a bucket of its warehouse, or on an order line that took it there
    levels = stock.levels(PRODUCT)
    assert min(level.available for level in levels) >= 0
    left = Counter[str]()
    for level in levels:
        left[level.warehouse] += level.available
    sold = Counter[str]()
    for order_line in stored.of(items.ORDER_LINE, product_id=PRODUCT):
        for take in order_line.get("takes", ()):
            sold[take["warehouse"]] += int(take["quantity"])
    placed = sum(1 for answer in orders if answer.status == 201)
    assert sum(sold.values()) == placed
    assert {wh: left[wh] + sold[wh] for wh in INITIAL} == INITIAL
    assert placed == sum(INITIAL.values())  # more buyers than units: the sale sold out
