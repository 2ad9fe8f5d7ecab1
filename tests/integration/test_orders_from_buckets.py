"""Orders take from stock buckets (issue 18) on moto: a busy bucket moves the order to another, a line
larger than any bucket is split over several, only too few units in all is insufficient-stock, and a
cancel puts every unit back in the bucket it came from."""

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import pytest
from botocore.exceptions import ClientError

from local.harness.client import ApiClient
from local.harness.factories import create_product, line, place_order, placed_order
from shopfeed.commerce import keys
from shopfeed.commerce.inventory.stock import StockRepository
from shopfeed.commerce.models import DEFAULT_WAREHOUSE, BucketRef, StockTake
from shopfeed.commerce.orders import services
from shopfeed.commerce.orders.repository import PLACE_ATTEMPTS, CommerceRepository
from shopfeed.platform import clients, dynamo
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.errors import Contention
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.identity import Caller
from shopfeed.platform.types import Money
from tests.support.calls import dynamodb_calls

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

TABLE = "CommerceTable"
PRICE = Money(amount=1999, currency="EUR")
INSUFFICIENT_STOCK = "https://shopfeed.dev/problems/insufficient-stock"


class BusyBucket:
    """The DynamoDB client, except that every TransactWriteItems touching ``busy`` (a bucket's PK) is
    cancelled with TransactionConflict on that item, as DynamoDB answers while another transaction
    holds it. Counts the transactions sent."""

    def __init__(self, client: Any, busy: str) -> None:
        self._client, self._busy = client, busy
        self.sent = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def transact_write_items(self, **request: Any) -> Any:
        self.sent += 1
        touched = [next(iter(op.values())) for op in request["TransactItems"]]
        pks = [dynamo.deserialize(op.get("Key") or op["Item"])["PK"] for op in touched]
        if self._busy in pks:
            reasons = [{"Code": "TransactionConflict" if pk == self._busy else "None"} for pk in pks]
            error = {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"}
            response: Any = {"Error": error, "CancellationReasons": reasons}
            raise ClientError(response, "TransactWriteItems")
        return self._client.transact_write_items(**request)


@pytest.fixture
def stock(aws: None) -> StockRepository:
    return StockRepository(dynamo.Table(clients.dynamodb(), TABLE))


@pytest.fixture
def busy_bucket_zero(admin: ApiClient, stock: StockRepository) -> tuple[CommerceRepository, BusyBucket]:
    """10 units over two buckets, the first always held by a concurrent transaction."""
    create_product(admin, "P-RED-TSHIRT", available=10)
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=0, buckets=2)
    client = BusyBucket(clients.dynamodb(), keys.stock_bucket("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 0)["PK"])
    table = dynamo.Table(cast("DynamoDBClient", client), TABLE)
    return CommerceRepository(table, CursorCodec(b"test-cursor-secret")), client


def order(store: CommerceRepository, quantity: int = 1) -> Callable[[], Any]:
    request = IdempotentRequest.of("U100", uuid.uuid4().hex, "place-order", {"q": quantity})
    caller = Caller("U100", frozenset())
    return lambda: services.place_order(store, caller, request, [("P-RED-TSHIRT", quantity, PRICE)])


def bucket(n: int) -> BucketRef:
    return BucketRef(warehouse=DEFAULT_WAREHOUSE, bucket=n)


def levels(stock: StockRepository) -> list[int]:
    return [level.available for level in stock.levels("P-RED-TSHIRT")]


def test_a_bucket_held_by_another_transaction_moves_the_order_to_another_bucket(
    stock: StockRepository, busy_bucket_zero: tuple[CommerceRepository, BusyBucket]
) -> None:
    # given 10 units over two buckets, the first always held by a concurrent transaction
    store, client = busy_bucket_zero

    # when five orders of one unit are placed
    placed = [order(store)().value for _ in range(5)]

    # then each took its unit from the second bucket, and its line says so
    assert [o.lines[0].takes for o in placed] == [(StockTake(warehouse=DEFAULT_WAREHOUSE, bucket=1, quantity=1),)] * 5
    assert levels(stock) == [5, 0]
    assert client.sent >= 5


def test_an_order_whose_only_bucket_with_stock_stays_busy_is_contention_not_insufficient_stock(
    stock: StockRepository, busy_bucket_zero: tuple[CommerceRepository, BusyBucket]
) -> None:
    # given the first bucket holds every unit left, and is always held by a concurrent transaction
    store, client = busy_bucket_zero
    for _ in range(5):
        order(store)()

    sent = client.sent

    # when one more order is placed, then it ends in Contention (409, retry) after its bounded tries,
    # never in insufficient-stock, and nothing is taken
    with pytest.raises(Contention):
        order(store)()
    assert client.sent - sent == PLACE_ATTEMPTS
    assert levels(stock) == [5, 0]


@pytest.fixture
def thirty_in_ten_buckets(admin: ApiClient, stock: StockRepository) -> None:
    """30 units over ten buckets in two warehouses: no bucket holds more than 3."""
    create_product(admin, "P-RED-TSHIRT", available=15)
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=0, buckets=5)
    stock.adjust_warehouse("P-RED-TSHIRT", "WH-EAST", 2, restock=15, buckets=5)


@pytest.mark.usefixtures("thirty_in_ten_buckets")
def test_a_line_larger_than_any_bucket_is_split_over_the_fullest_buckets_in_one_transaction(
    admin: ApiClient, stock: StockRepository
) -> None:

    # when 25 units are ordered on one line
    with dynamodb_calls() as calls:
        answer = place_order(admin, line("P-RED-TSHIRT", 25, PRICE.amount))

    # then the order is placed: its line took from nine buckets (fullest first), in one transaction
    # tried after the first (one bucket, short) and one strong read of the layout and every bucket
    assert answer.status == 201, answer.text
    assert calls.operations.count("TransactWriteItems") == 2
    [placed] = answer.json["lines"]
    assert placed["quantity"] == 25
    assert sum(levels(stock)) == 5
    assert all(level >= 0 for level in levels(stock))


@pytest.mark.usefixtures("thirty_in_ten_buckets")
def test_an_order_is_refused_only_when_all_buckets_together_hold_too_few(
    admin: ApiClient, stock: StockRepository
) -> None:

    # when 31 are ordered, then it is insufficient-stock naming the 30 there are, and nothing moved
    answer = place_order(admin, line("P-RED-TSHIRT", 31, PRICE.amount))
    assert answer.status == 409
    assert answer.json["type"] == INSUFFICIENT_STOCK
    assert answer.json["products"] == [{"product_id": "P-RED-TSHIRT", "requested": 31, "available": 30}]
    assert levels(stock) == [3] * 10

    # and 30 are served
    assert place_order(admin, line("P-RED-TSHIRT", 30, PRICE.amount)).status == 201
    assert levels(stock) == [0] * 10


def test_a_cancel_puts_every_unit_back_in_the_bucket_it_came_from(admin: ApiClient, stock: StockRepository) -> None:
    # given an order that took 5 units from three buckets of 2
    create_product(admin, "P-RED-TSHIRT", available=6)
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=0, buckets=3)
    placed = placed_order(admin, line("P-RED-TSHIRT", 5, PRICE.amount))
    taken = sorted(levels(stock))
    assert taken == [0, 0, 1]

    # when it is cancelled
    assert admin.post(f"/orders/{placed['order_id']}/cancel").status == 200

    # then each bucket holds what it held before
    assert levels(stock) == [2, 2, 2]


def test_a_cancel_after_a_resize_removed_the_bucket_puts_the_units_in_one_still_there(
    admin: ApiClient, stock: StockRepository
) -> None:
    # given an order that took from the third of three buckets, which a resize then removed
    create_product(admin, "P-RED-TSHIRT", available=3)
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=0, buckets=3)
    stock.move("P-RED-TSHIRT", bucket(0), bucket(2), 1)
    stock.move("P-RED-TSHIRT", bucket(1), bucket(2), 1)
    placed = placed_order(admin, line("P-RED-TSHIRT", 3, PRICE.amount))
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 2, restock=0, buckets=2)

    # when the order is cancelled, then its 3 units are back, in bucket 2 mod 2 = 0
    assert admin.post(f"/orders/{placed['order_id']}/cancel").status == 200
    assert levels(stock) == [3, 0]


def test_a_container_that_kept_a_layout_from_before_a_resize_still_finds_every_bucket(
    admin: ApiClient, stock: StockRepository
) -> None:
    # given a container that placed an order when the product had one bucket (it keeps that layout),
    # and a resize to three buckets since: 9 units, 3 in each
    create_product(admin, "P-RED-TSHIRT", available=10)
    placed_order(admin, line("P-RED-TSHIRT", 1, PRICE.amount))
    stock.adjust_warehouse("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 1, restock=0, buckets=3)

    # when that container takes orders of 5 (more than any bucket) and then of 4 (all that is left)
    first = place_order(admin, line("P-RED-TSHIRT", 5, PRICE.amount))
    second = place_order(admin, line("P-RED-TSHIRT", 4, PRICE.amount))

    # then both are placed from the buckets the resize added too, and a refusal counts all of them
    assert (first.status, second.status) == (201, 201), (first.text, second.text)
    assert levels(stock) == [0, 0, 0]
    refused = place_order(admin, line("P-RED-TSHIRT", 1, PRICE.amount))
    assert refused.json["products"] == [{"product_id": "P-RED-TSHIRT", "requested": 1, "available": 0}]
