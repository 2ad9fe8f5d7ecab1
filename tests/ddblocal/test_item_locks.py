"""The per-item conflict proxy (local/item_locks.py) answers what DynamoDB answers, on Amazon's engine.

The flash-sale benchmark's conflicts come from it, so a proxy that let a transaction through a held
item (or cancelled one on free items, or wrote anything of a cancelled one) would make its figures lie.
An item is held here by the test itself, as a transaction in flight would hold it: no timing involved.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.exceptions import ClientError

from local.dynamodb_local import DynamoDBLocal
from local.item_locks import ItemKey, ItemLocks, item_locks
from shopfeed.commerce import keys
from shopfeed.platform import dynamo
from tests.ddblocal.conftest import StoredItems

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]


@dataclass(frozen=True)
class Proxied:
    """A DynamoDB client through the proxy, its locks, the table, and the hot item it already holds."""

    client: "DynamoDBClient"
    locks: ItemLocks
    table: str
    hot: ItemKey


@pytest.fixture
def proxy(tables: dict[str, str], engine: DynamoDBLocal) -> Iterator[Proxied]:
    """The proxy, with the product HOT's item held as a transaction in flight would hold it."""
    table = tables["CommerceTable"]
    hot = (table, keys.product("HOT")["PK"], keys.product("HOT")["SK"])
    with item_locks(engine.endpoint) as (endpoint, locks):
        locks.hold([hot])
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        yield Proxied(client, locks, table, hot)


def _add(table: str, product_id: str) -> Any:
    """Add 1 to ``n`` of the product's item (created by the first)."""
    return {
        "Update": {
            "TableName": table,
            "Key": dynamo.serialize(keys.product(product_id)),
            "UpdateExpression": "ADD n :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
    }


def test_a_transaction_reaching_a_held_item_is_cancelled_for_that_item_and_writes_nothing(
    proxy: Proxied, stored: StoredItems
) -> None:
    # given: an order in flight holds HOT (the fixture)

    # when
    with pytest.raises(ClientError) as cancelled:
        proxy.client.transact_write_items(TransactItems=[_add(proxy.table, "COLD"), _add(proxy.table, "HOT")])

    # then
    error = cancelled.value.response
    assert error["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in error["CancellationReasons"]] == ["None", "TransactionConflict"]
    assert stored.all() == []
    assert proxy.locks.take()[-1].conflicted == proxy.hot


def test_a_transaction_on_other_items_goes_through_while_one_is_held_and_the_item_is_free_once_released(
    proxy: Proxied, stored: StoredItems
) -> None:
    # given: an order in flight holds HOT (the fixture)

    # when
    proxy.client.transact_write_items(TransactItems=[_add(proxy.table, "COLD")])
    proxy.locks.release([proxy.hot], applied=False)
    proxy.client.transact_write_items(TransactItems=[_add(proxy.table, "HOT")])

    # then
    assert sorted((item["PK"], item["n"]) for item in stored.all()) == [
        (keys.product("COLD")["PK"], 1),
        (keys.product("HOT")["PK"], 1),
    ]
    cold = (proxy.table, keys.product("COLD")["PK"], keys.product("COLD")["SK"])
    assert [attempt.items for attempt in proxy.locks.take() if attempt.applied] == [(cold,), (proxy.hot,)]
