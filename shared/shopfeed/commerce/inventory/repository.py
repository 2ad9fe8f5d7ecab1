"""CommerceTable as the inventory snapshots see it: every DynamoDB call of the job and of its read.

The job pages the Catalog index (KEYS_ONLY, one entry per product), reads each page's stock levels
per warehouse strongly consistent (the layouts, then their buckets: BatchGetItems) and writes the
day's snapshot items with BatchWriteItem.
Ops read a day with one Query of its partition, in product id order.
"""

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from shopfeed.commerce import items, keys
from shopfeed.commerce.inventory.stock import StockRepository
from shopfeed.commerce.models import DEFAULT_WAREHOUSE, InventoryLevel
from shopfeed.platform import batch_writes, dynamo
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.dynamo import BASE_TABLE
from shopfeed.platform.models import Page
from shopfeed.platform.pagination import Reader, Source

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import WriteRequestTypeDef

# BatchGetItem reads at most 100 keys a call: a catalog page is one call.
CATALOG_PAGE: Final = 100


class SnapshotRepository:
    """What the snapshot job reads and writes."""

    def __init__(self, table: dynamo.Table) -> None:
        self._table = table

    def catalog_pages(self, page_size: int = CATALOG_PAGE) -> Iterator[list[str]]:
        """Every product id, a page (one Query of the Catalog index) at a time, in id order."""
        index = keys.CATALOG_INDEX
        start: Mapping[str, Any] | None = None
        while True:
            response = self._table.query(index, keys.CATALOG, limit=page_size, start=start)
            page = [raw[index.sort_key]["S"] for raw in response["Items"]]
            if page:
                yield page
            start = response.get("LastEvaluatedKey")
            if not start:
                return

    def stock_levels(self, product_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """product id → warehouse → units, read strongly consistent: the page's layouts (one
        BatchGetItem), their buckets (one per 100), and the products not backfilled yet (one more: their
        number is on the product item, counted in the default warehouse)."""
        stock = StockRepository(self._table)
        layouts = stock.layouts(product_ids)
        levels: dict[str, dict[str, int]] = {}
        for product_id, buckets in stock.levels_of_many(list(layouts.values())).items():
            per_warehouse = levels.setdefault(product_id, dict.fromkeys(layouts[product_id].warehouses, 0))
            for level in buckets:
                per_warehouse[level.warehouse] += level.available
        legacy = [product_id for product_id in product_ids if product_id not in layouts]
        if legacy:
            found = self._table.get_many([keys.product(product_id) for product_id in legacy], items.STOCK_ATTRIBUTES)
            for item in found:
                levels[str(item["product_id"])] = {DEFAULT_WAREHOUSE: int(item.get(items.LEGACY_AVAILABLE, 0))}
        return levels

    def write(self, day: str, levels: Sequence[InventoryLevel], expires_at: int) -> int:
        """Put the day's snapshot items (keyed by day and product: writing one again replaces it);
        the BatchWriteItem calls made."""
        requests: list[WriteRequestTypeDef] = [
            {"PutRequest": {"Item": dynamo.serialize(items.snapshot_item(day, level, expires_at))}} for level in levels
        ]
        return batch_writes.write_all(self._table.client, self._table.name, requests)


class SnapshotQueries:
    """What ops read: a day's snapshot, paged."""

    def __init__(self, table: dynamo.Table, cursors: CursorCodec) -> None:
        self._pages = Reader(table, cursors)

    def list_day(self, day: str, limit: int, cursor: str | None) -> Page[InventoryLevel]:
        source = Source(BASE_TABLE, keys.snapshot_partition(day))
        return self._pages.page_of(items.inventory_level_from, f"inventory-snapshot:{day}", source, limit, cursor)
