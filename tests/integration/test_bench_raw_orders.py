"""The raw side of the orders benchmark (bench/orders.py) writes what placing an order writes, item for item."""

import itertools
from collections import Counter
from typing import Any

from bench.orders import BUYER, PRODUCTS, placed_transactions
from local.harness.client import ApiClient
from local.harness.factories import create_product, line, place_order
from shopfeed.commerce import items
from shopfeed.platform import clients
from shopfeed.platform.dynamo import ENTITY_TYPE, PARTITION, SORT

# Products and their stock (layout, buckets): both sides update, never create, them.
STOCKED = frozenset({items.PRODUCT, items.STOCK_LAYOUT, items.STOCK_BUCKET})


def _written(table: str) -> Counter[str]:
    """Items of the table by entity type, products and their stock left out."""
    found = clients.dynamodb().scan(TableName=table)["Items"]
    return Counter(item[ENTITY_TYPE]["S"] for item in found if item[ENTITY_TYPE]["S"] not in STOCKED)


def _empty_all_but_products(table: str) -> None:
    dynamodb = clients.dynamodb()
    for item in dynamodb.scan(TableName=table)["Items"]:
        if item[ENTITY_TYPE]["S"] not in STOCKED:
            dynamodb.delete_item(TableName=table, Key={PARTITION: item[PARTITION], SORT: item[SORT]})


def _commerce_table() -> str:
    from shopfeed.commerce import bootstrap

    return bootstrap.api_table().name


def test_a_raw_transaction_writes_the_same_items_as_an_order_placed_through_the_api(
    admin: ApiClient, commerce_api: ApiClient
) -> None:
    # given the benchmark's first product, in stock
    create_product(admin, PRODUCTS[0], available=10)
    table = _commerce_table()
    buyer = commerce_api.as_user(BUYER)
    # when one order is placed through the API, and one raw transaction is sent as the benchmark sends it
    assert place_order(buyer, line(PRODUCTS[0])).status == 201
    through_api = _written(table)
    _empty_all_but_products(table)
    (transaction,) = itertools.islice(placed_transactions(BUYER, 0), 1)
    clients.dynamodb().transact_write_items(TransactItems=transaction)
    # then the same kinds of items, as many of each, were written
    assert _written(table) == through_api
    assert through_api[items.ORDER] == 1


def test_a_raw_transaction_places_an_order_the_api_reads_back_and_takes_its_stock(
    admin: ApiClient, commerce_api: ApiClient
) -> None:
    # given the benchmark's first product with 10 in stock
    create_product(admin, PRODUCTS[0], available=10)
    buyer = commerce_api.as_user(BUYER)
    # when the benchmark's first raw transaction is sent
    (transaction,) = itertools.islice(placed_transactions(BUYER, 0), 1)
    clients.dynamodb().transact_write_items(TransactItems=transaction)
    # then the buyer's order is there and one of the product is taken
    order: dict[str, Any] = buyer.get("/users/me/orders").json["items"][0]
    assert buyer.get(f"/orders/{order['order_id']}").status == 200
    assert buyer.get(f"/products/{PRODUCTS[0]}").json["available"] == 9


def test_each_client_starts_its_orders_on_another_product(admin: ApiClient) -> None:
    # given the products two clients start on, and the clients' first transactions
    for product_id in PRODUCTS[:2]:
        create_product(admin, product_id, available=10)
    first, second = (next(placed_transactions(BUYER, client)) for client in (0, 1))

    # then they decrement different products' stock
    def stocked(transaction: list[Any]) -> set[str]:
        return {op["Update"]["Key"][PARTITION]["S"] for op in transaction if "Update" in op}

    assert stocked(first) != stocked(second)
