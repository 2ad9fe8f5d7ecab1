"""Use cases of stock by warehouse (STOCK, seed 001 AP 7): ops read a product's levels per warehouse
and bucket; admins restock a warehouse and set its bucket count. No HTTP."""

from typing import Protocol

from shopfeed.commerce.models import BucketLevel, StockLayout
from shopfeed.platform.identity import ADMIN, OPS, Caller


class Stock(Protocol):
    """A product's stock buckets (inventory.stock.StockRepository)."""

    def layout(self, product_id: str) -> StockLayout: ...
    def levels_of(self, layout: StockLayout) -> list[BucketLevel]: ...
    def adjust_warehouse(
        self, product_id: str, warehouse: str, expected_version: int, restock: int, buckets: int | None
    ) -> tuple[StockLayout, list[BucketLevel]]: ...


def read_inventory(stock: Stock, caller: Caller, product_id: str) -> tuple[StockLayout, list[BucketLevel]]:
    """Every bucket of the product, strongly consistent: one GetItem (the layout) and one BatchGetItem
    (its buckets, at most MAX_BUCKETS). Ops only."""
    caller.require(OPS, "read inventory")
    layout = stock.layout(product_id)
    return layout, stock.levels_of(layout)


def adjust_inventory(
    stock: Stock,
    caller: Caller,
    product_id: str,
    warehouse: str,
    expected_version: int,
    restock: int,
    buckets: int | None,
) -> tuple[StockLayout, list[BucketLevel]]:
    """Restock a warehouse and (or) set its bucket count, at the layout version the admin read
    (If-Match); its units are spread evenly over its buckets. Admin only."""
    caller.require(ADMIN, "manage inventory")
    layout, _ = stock.adjust_warehouse(product_id, warehouse, expected_version, restock, buckets)
    return layout, stock.levels_of(layout)
