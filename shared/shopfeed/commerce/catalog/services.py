"""Use cases of the catalog: products, their prices and stock. No HTTP, no stream records."""

from typing import Any, Protocol

from shopfeed.commerce.models import Product, ProductSummary, Restocked
from shopfeed.platform.clock import iso, utc_now
from shopfeed.platform.errors import NotFound
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.identity import ADMIN, Caller
from shopfeed.platform.models import Page


class Catalog(Protocol):
    """The catalog's storage port (CatalogRepository, or an in-memory fake in unit tests)."""

    def add_product(self, product: Product) -> None: ...
    def get_product(self, product_id: str) -> Product | None: ...
    def update_product(self, product_id: str, expected_version: int, changes: dict[str, Any], now: str) -> Product: ...
    def list_products_in_category(self, category: str, limit: int, cursor: str | None) -> Page[ProductSummary]: ...
    def restock(
        self, product_id: str, quantity: int, request: IdempotentRequest, restocked: Restocked, now: Any
    ) -> Created[Restocked]: ...


def create_product(store: Catalog, caller: Caller, fields: dict[str, Any]) -> Product:
    caller.require(ADMIN, "manage the catalog")
    now = iso(utc_now())
    product = Product.model_validate({**fields, "created_at": now, "updated_at": now, "version": 1})
    store.add_product(product)
    return product


def read_product(store: Catalog, product_id: str) -> Product:
    product = store.get_product(product_id)
    if product is None:
        raise NotFound("product", product_id)
    return product


def update_product(
    store: Catalog, caller: Caller, product_id: str, expected_version: int, changes: dict[str, Any]
) -> Product:
    caller.require(ADMIN, "manage the catalog")
    return store.update_product(product_id, expected_version, changes, iso(utc_now()))


def list_category(store: Catalog, category: str, limit: int, cursor: str | None) -> Page[ProductSummary]:
    return store.list_products_in_category(category, limit, cursor)


def restock_product(
    store: Catalog, caller: Caller, product_id: str, quantity: int, request: IdempotentRequest
) -> Created[Restocked]:
    """Add stock once per key; a retry answers what the key first answered."""
    caller.require(ADMIN, "restock products")
    now = utc_now()
    restocked = Restocked(product_id=product_id, quantity_added=quantity, restocked_at=iso(now))
    return store.restock(product_id, quantity, request, restocked, now)
