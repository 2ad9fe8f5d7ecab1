"""CommerceTable: the DynamoDB calls of the catalog (products, prices, stock), on the platform's table
gateway. Returns domain models; turns failed conditions and cancelled transactions into domain errors."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from boto3.dynamodb.conditions import Attr

from shopfeed.commerce import items, keys
from shopfeed.commerce.models import Product, ProductSummary, Restocked
from shopfeed.commerce.types import MAX_STOCK
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.dynamo import Transaction, Update
from shopfeed.platform.errors import AlreadyExists, InvalidRequest, NotFound, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest, Snapshot
from shopfeed.platform.models import Page
from shopfeed.platform.pagination import query_page

# Transaction labels: cancellation reasons are read by these, never by position.
_KEY = "idempotency-key"

# What a key record keeps of the value it created (see platform.idempotency.Snapshot).
RESTOCK_SNAPSHOT = Snapshot(Restocked, version=1)


class CatalogRepository:
    def __init__(self, table: dynamo.Table, cursors: CursorCodec) -> None:
        self._table = table
        self._cursors = cursors

    def add_product(self, product: Product) -> None:
        if not self._table.create(items.product_item(product)):
            raise AlreadyExists("product", product.product_id)

    def get_product(self, product_id: str) -> Product | None:
        item = self._table.get(keys.product(product_id))
        return items.product_from(item) if item else None

    def update_product(self, product_id: str, expected_version: int, changes: Mapping[str, Any], now: str) -> Product:
        # Every index reading a changed attribute takes its new keys (a moved category moves the product
        # in ProductsByCategory); the product id is all the rest they read.
        after = {"entity_type": items.PRODUCT, "product_id": product_id, **changes}
        change = dynamo.reindexed(keys.INDEXES, after, Update(set={**changes, "updated_at": now}))
        try:
            item = self._table.update_versioned(keys.product(product_id), expected_version, change)
        except dynamo.ConditionFailed as failed:
            if failed.current is None:
                raise NotFound("product", product_id) from failed
            raise StaleVersion("product", product_id, int(failed.current["version"])) from failed
        return items.product_from(item)

    def list_products_in_category(self, category: str, limit: int, cursor: str | None) -> Page[ProductSummary]:
        found, next_cursor = query_page(
            self._table,
            self._cursors,
            f"products-by-category:{category}",
            keys.PRODUCTS_BY_CATEGORY,
            keys.category_partition(category),
            limit,
            cursor,
        )
        return Page(items=[items.product_summary_from(i) for i in found], next_cursor=next_cursor)

    def restock(
        self,
        product_id: str,
        quantity: int,
        request: IdempotentRequest,
        restocked: Restocked,
        now: datetime,
    ) -> Created[Restocked]:
        """Add stock and record the Idempotency-Key in one transaction."""
        transaction = Transaction()
        transaction.add(
            "product",
            self._table.update_op(
                keys.product(product_id),
                Update(add={"available": quantity}),
                # The bound is checked where the sum is made: stock can never pass MAX_STOCK.
                condition=Attr("PK").exists() & Attr("available").lte(MAX_STOCK - quantity),
                return_old_on_failure=True,
            ),
        )
        transaction.add(_KEY, idempotency.record_put(self._table.name, request, RESTOCK_SNAPSHOT, restocked, now))
        try:
            self._table.transact(transaction, busy=f"product {product_id}")
        except dynamo.TransactionCancelled as cancelled:
            replayed = idempotency.replay(request, cancelled.reason(_KEY), RESTOCK_SNAPSHOT)
            if replayed:
                return replayed
            stock = cancelled.reason("product")
            if stock.failed_condition and stock.item is None:
                raise NotFound("product", product_id) from cancelled
            if stock.failed_condition:
                raise InvalidRequest(
                    f"Restocking {quantity} would take product {product_id} past the maximum stock of {MAX_STOCK}."
                ) from cancelled
            raise
        return Created(restocked)

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
