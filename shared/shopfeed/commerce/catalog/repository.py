"""CommerceTable: the DynamoDB calls of the catalog (products, prices, stock), on the platform's table
gateway. Returns domain models; turns failed conditions and cancelled transactions into domain errors."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from shopfeed.commerce import items, keys
from shopfeed.commerce.inventory.stock import REPRICE_BUDGET_S, RESTOCK_SNAPSHOT, StockRepository, new_layout
from shopfeed.commerce.models import Product, ProductSummary, Restocked, StockLayout
from shopfeed.platform import dynamo
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.dynamo import Transaction, Update
from shopfeed.platform.errors import AlreadyExists, Contention, NotFound, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.models import Page
from shopfeed.platform.pagination import Reader, Source
from shopfeed.platform.types import Money

__all__ = ["RESTOCK_SNAPSHOT", "CatalogRepository"]

# A price change re-reads the layout and tries again when a resize moved it meanwhile.
_REPRICE_ATTEMPTS = 4


class CatalogRepository:
    def __init__(self, table: dynamo.Table, cursors: CursorCodec) -> None:
        self._table = table
        self._pages = Reader(table, cursors)
        self.stock = StockRepository(table)

    def add_product(self, product: Product) -> None:
        """The product, its stock layout (one bucket in the default warehouse) and that bucket holding
        ``product.available``, in one transaction."""
        transaction = Transaction()
        transaction.add("product", self._table.put_op(items.product_item(product), if_absent=True))
        for label, op in self.stock.create_ops(new_layout(product.product_id, product.price), product.available):
            transaction.add(label, op)
        try:
            self._table.transact(transaction, busy=f"product {product.product_id}")
        except dynamo.TransactionCancelled as cancelled:
            if not cancelled.failed("product"):
                raise
            # Items equal to every one this wrote are this very write, made by an attempt whose answer
            # was lost (as Table.create answers); anything else is another product of that id.
            puts = zip(transaction, transaction.ops, strict=True)
            wanted = {label: dynamo.deserialize(op["Put"]["Item"]) for label, op in puts}
            if any(cancelled.reason(label).item != item for label, item in wanted.items()):
                raise AlreadyExists("product", product.product_id) from cancelled

    def get_product(self, product_id: str, stock: bool = True) -> Product | None:
        """The product and its layout in one strongly consistent BatchGetItem, then its buckets' total
        in one more (decision 157: fresh, 2 round trips; a product not backfilled yet answers the
        number on its item). Without ``stock``, the product item alone (one GetItem; ``available`` 0)."""
        if not stock:
            item = self._table.get(keys.product(product_id))
            return items.product_from(item, available=0) if item else None
        found = self._table.get_many([keys.product(product_id), keys.stock_layout(product_id)])
        product = next((i for i in found if i["SK"] == keys.META), None)
        if product is None:
            return None
        layout = next((i for i in found if i["SK"] == keys.STOCK_ITEM), None)
        return self._with_total(product, items.stock_layout_from(layout) if layout else None)

    def _with_total(self, product: dynamo.Item, layout: StockLayout | None) -> Product:
        """The product with its buckets' total (``StockRepository.page_total``: one strong BatchGetItem up
        to 100 buckets, kept 2 s per container past that); a product not backfilled yet answers the
        number on its item."""
        if layout is None:
            return items.product_from(product)
        return items.product_from(product, available=self.stock.page_total(layout))

    def update_product(self, product_id: str, expected_version: int, changes: Mapping[str, Any], now: str) -> Product:
        # Every index reading a changed attribute takes its new keys (a moved category moves the product
        # in ProductsByCategory); the product id is all the rest they read.
        after = {"entity_type": items.PRODUCT, "product_id": product_id, **changes}
        change = dynamo.reindexed(keys.INDEXES, after, Update(set={**changes, "updated_at": now}))
        if "price" in changes:
            return self._reprice(product_id, expected_version, change, Money.model_validate(changes["price"]))
        try:
            item = self._table.update_versioned(keys.product(product_id), expected_version, change)
        except dynamo.ConditionFailed as failed:
            if failed.current is None:
                raise NotFound("product", product_id) from failed
            raise StaleVersion("product", product_id, int(failed.current["version"])) from failed
        # The product as this update left it (its version is the ETag answered), not as read again after.
        return self._with_total(item, self.stock.find_layout(product_id))

    def _reprice(self, product_id: str, expected_version: int, change: Update, price: Money) -> Product:
        """A price change: the product and its layout (new price, next price version, the ``repricing``
        mark) in one transaction, then every bucket, sealed then opened, one UpdateItem each
        (``StockRepository.finish_reprice``, decision 225): orders check the price on the bucket they
        take from (decision 153), never on the product item. A price change left half done by an
        earlier call is finished first."""
        for _ in range(_REPRICE_ATTEMPTS):
            layout = self.stock.find_layout(product_id)
            if layout is not None and layout.repricing:
                if not self.stock.finish_reprice(layout, REPRICE_BUDGET_S):
                    raise Contention(f"the price change of product {product_id}")
                continue
            transaction = Transaction()
            product = self._table.versioned_update_op(keys.product(product_id), expected_version, change)
            transaction.add("product", product)
            # Buckets already at the price (a repeated PATCH that finished a change cut short) stay as they are.
            repriced = layout is not None and layout.price != price
            for label, op in self.stock.reprice_ops(layout, price) if layout is not None and repriced else ():
                transaction.add(label, op)
            try:
                self._table.transact(transaction, busy=f"product {product_id}")
            except dynamo.TransactionCancelled as cancelled:
                current = cancelled.reason("product")
                if current.failed_condition:
                    if current.item is None:
                        raise NotFound("product", product_id) from cancelled
                    raise StaleVersion("product", product_id, int(current.item["version"])) from cancelled
                if cancelled.failed_labels():
                    continue  # a resize moved the layout since it was read
                raise
            if (
                layout is not None
                and repriced
                and not self.stock.finish_reprice(self.stock.repriced(layout, price), REPRICE_BUDGET_S)
            ):
                # Written so far is kept: the same PATCH at the product's new ETag finishes it.
                raise Contention(f"the price change of product {product_id}")
            found = self.get_product(product_id)
            if found is None:
                raise NotFound("product", product_id)
            return found
        raise Contention(f"product {product_id}")

    def list_products_in_category(self, category: str, limit: int, cursor: str | None) -> Page[ProductSummary]:
        source = Source(keys.PRODUCTS_BY_CATEGORY, keys.category_partition(category))
        return self._pages.page_of(
            items.product_summary_from, f"products-by-category:{category}", source, limit, cursor
        )

    def restock(
        self,
        product_id: str,
        quantity: int,
        request: IdempotentRequest,
        restocked: Restocked,
        now: datetime,
    ) -> Created[Restocked]:
        """Add stock and record the Idempotency-Key in one transaction (into the default warehouse's
        buckets: ``inventory.stock``)."""
        return self.stock.restock(product_id, quantity, request, restocked, now)

    # -- building blocks ---------------------------------------------------------------------

    def _update_versioned(
        self,
        kind: str,
        ident: str,
        key: Mapping[str, str],
        expected_version: int,
        changes: Mapping[str, Any],
        now: str,
    ) -> dynamo.Item:
        try:
            return self._table.update_versioned(key, expected_version, Update(set={**changes, "updated_at": now}))
        except dynamo.ConditionFailed as failed:
            if failed.current is None:
                raise NotFound(kind, ident) from failed
            raise StaleVersion(kind, ident, int(failed.current["version"])) from failed
