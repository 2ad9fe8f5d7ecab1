"""A catalog of stored product items written straight to a table, and the check that an index holds it."""

from typing import Any

from local.harness.builders import product
from shopfeed.commerce import items
from shopfeed.commerce.catalog.search import PRODUCTS, product_document
from shopfeed.platform import clients, dynamo
from shopfeed.platform.search import SearchIndex

_KINDS = (("shirts", "red shirt"), ("hats", "wool hat"), ("mugs", "tea mug"))


def catalog(count: int) -> list[dict[str, Any]]:
    """``count`` product items P-00000.. over three categories, at versions 1 to 4, as products were
    stored before their stock moved to buckets: the number on the item (the backfill moves it)."""
    made = [
        product(f"P-{n:05d}", category=_KINDS[n % 3][0]).model_copy(
            update={"name": f"Item {n} {_KINDS[n % 3][1]}", "version": 1 + n % 4}
        )
        for n in range(count)
    ]
    return [{**items.product_item(p), items.LEGACY_AVAILABLE: p.available} for p in made]


def put_items(table: str, all_items: list[dict[str, Any]], client: Any = None) -> None:
    """``all_items`` written to ``table`` by ``client`` (the function's, as the environment says, by default)."""
    client = client or clients.dynamodb()
    for start in range(0, len(all_items), 25):
        requests = [{"PutRequest": {"Item": dynamo.serialize(item)}} for item in all_items[start : start + 25]]
        client.batch_write_item(RequestItems={table: requests})


def assert_index_holds(index: SearchIndex, table_items: list[dict[str, Any]]) -> int:
    """Every product item of the table is its document at its version, compared field by field;
    answers how many were compared."""
    table = {item["product_id"]: item for item in table_items if item.get("entity_type") == items.PRODUCT}
    ids = sorted(table)
    for start in range(0, len(ids), 500):
        stored = index.get(PRODUCTS, ids[start : start + 500])
        for product_id in ids[start : start + 500]:
            item = table[product_id]
            assert (stored[product_id].version, stored[product_id].deleted) == (item["version"], False), product_id
            assert dict(stored[product_id].body) == product_document(item)[1], product_id
    return len(ids)
