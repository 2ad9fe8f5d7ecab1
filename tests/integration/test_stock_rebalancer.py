"""The stock rebalancer on moto, from real stream records filtered as its mapping filters them: low
buckets are refilled from full ones of the same warehouse, every unit kept, a batch delivered again
moves nothing more, and only low buckets' records reach it."""

from typing import Any

import pytest

from functions.stock_rebalancer.app import lambda_handler
from local.harness.apigw import sample
from local.harness.client import ApiClient
from local.harness.factories import create_product
from shopfeed.commerce.inventory.stock import StockRepository
from shopfeed.commerce.models import DEFAULT_WAREHOUSE, BucketRef
from shopfeed.platform import clients, dynamo
from tests.integration.outbox_support import STREAM_FUNCTION, CommerceStream, batch
from tests.support.calls import dynamodb_calls
from tests.support.commerce_stream import routed

REBALANCER = "StockRebalancerFunction"
PRODUCT = "P-RED-TSHIRT"
EAST = "WH-EAST"


@pytest.fixture
def stock(aws: None) -> StockRepository:
    return StockRepository(dynamo.Table(clients.dynamodb(), "CommerceTable"))


def ref(bucket: int, warehouse: str = DEFAULT_WAREHOUSE) -> BucketRef:
    return BucketRef(warehouse=warehouse, bucket=bucket)


def levels(stock: StockRepository, warehouse: str = DEFAULT_WAREHOUSE) -> list[int]:
    return [level.available for level in stock.levels(PRODUCT) if level.warehouse == warehouse]


def rebalance(records: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(lambda_handler(batch(routed(records, REBALANCER)), STREAM_FUNCTION))


@pytest.fixture
def uneven(admin: ApiClient, stock: StockRepository, stream: CommerceStream) -> CommerceStream:
    """40 units over 4 buckets of the default warehouse, drained unevenly to 0, 2, 18, 20 (as orders
    drain them: bucket writes that leave two of them below the mark); the stream read from before."""
    create_product(admin, PRODUCT, available=40)
    stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, 1, restock=0, buckets=4)
    stream.read()
    stock.move(PRODUCT, ref(0), ref(3), 10)
    stock.move(PRODUCT, ref(1), ref(2), 8)
    assert levels(stock) == [0, 2, 18, 20]
    return stream


def test_low_buckets_are_refilled_from_the_full_ones_and_every_unit_is_kept(
    uneven: CommerceStream, stock: StockRepository
) -> None:
    # given the records of the uneven drain
    records = uneven.read()

    # when the rebalancer gets the ones its mapping lets in
    with dynamodb_calls() as calls:
        response = rebalance(records)

    # then only the two low buckets' records reached it, one product read once, and two moves made
    assert len(routed(records, REBALANCER)) == 2
    assert response == {"batchItemFailures": []}
    assert levels(stock) == [10, 10, 10, 10]
    assert calls.operations == ["GetItem", "BatchGetItem", "TransactWriteItems", "TransactWriteItems"]


def test_a_batch_delivered_again_moves_nothing_more(uneven: CommerceStream, stock: StockRepository) -> None:
    # given a batch already rebalanced
    records = uneven.read()
    rebalance(records)

    # when Lambda delivers it again (a retry, a duplicate)
    with dynamodb_calls() as calls:
        response = rebalance(records)

    # then it reads the levels, finds them even and writes nothing
    assert response == {"batchItemFailures": []}
    assert levels(stock) == [10, 10, 10, 10]
    assert "TransactWriteItems" not in calls.operations


def test_the_moves_own_records_do_not_wake_the_rebalancer_again(uneven: CommerceStream) -> None:
    # given the rebalance made (its moves are bucket writes on the stream too)
    rebalance(uneven.read())

    # then the buckets it left at the share are above the mark: none of its records comes back
    assert routed(uneven.read(), REBALANCER) == []


def test_a_low_bucket_never_takes_units_from_another_warehouse(
    admin: ApiClient, stock: StockRepository, stream: CommerceStream
) -> None:
    # given a default warehouse of 2 buckets holding 1 unit, and 60 units in another warehouse
    create_product(admin, PRODUCT, available=1)
    stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, 1, restock=0, buckets=2)
    stock.adjust_warehouse(PRODUCT, EAST, 2, restock=60, buckets=2)
    stream.read()
    stock.move(PRODUCT, ref(0), ref(1), 1)  # the default warehouse's bucket 0 drained: low

    # when
    response = rebalance(stream.read())

    # then nothing crossed: the east units stay east, the default warehouse keeps its single unit
    assert response == {"batchItemFailures": []}
    assert levels(stock) == [0, 1]
    assert levels(stock, EAST) == [30, 30]


def test_the_sample_low_bucket_record_evens_its_product(admin: ApiClient, stock: StockRepository) -> None:
    # given P-RED-TSHIRT's first bucket drained (what events/streams/commerce_stock_bucket_low.json says)
    create_product(admin, PRODUCT, available=40)
    stock.adjust_warehouse(PRODUCT, DEFAULT_WAREHOUSE, 1, restock=0, buckets=4)
    stock.move(PRODUCT, ref(0), ref(3), 10)

    # when the sample record is delivered as `sam local invoke` would
    response = rebalance(sample("streams/commerce_stock_bucket_low.json")["Records"])

    # then it passed the mapping's filter and the buckets are even again
    assert response == {"batchItemFailures": []}
    assert levels(stock) == [10, 10, 10, 10]
