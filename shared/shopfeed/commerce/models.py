"""Domain models of the commerce context: what services reason about (no keys, no HTTP)."""

from enum import StrEnum
from typing import Annotated, Final

from pydantic import Field

from shopfeed.commerce.types import ProductId, Quantity, StockLevel
from shopfeed.platform.models import Model
from shopfeed.platform.types import Money, UserId, Version

# TransactWriteItems takes at most 100 items: an order writes its header, one line and one stock
# decrement per product, an outbox event and an idempotency record: 3 + 2n <= 100.
MAX_ORDER_LINES: Final = 48


class Customer(Model):
    user_id: UserId
    email: str
    # True when the address came from the token's verified `email` claim; only such an address is
    # guarded as unique (an unverified one claims nothing, so nobody can take someone else's).
    email_verified: bool = False
    name: str
    created_at: str
    updated_at: str
    version: Version


class Product(Model):
    product_id: ProductId
    name: str
    description: str
    category: str
    price: Money
    available: StockLevel
    created_at: str
    updated_at: str
    version: Version


class OrderStatus(StrEnum):
    PLACED = "Placed"
    PAID = "Paid"
    SHIPPED = "Shipped"
    DELIVERED = "Delivered"
    CANCELLED = "Cancelled"

    def can_become(self, target: "OrderStatus") -> bool:
        return target in _TRANSITIONS[self]


_TRANSITIONS: dict[OrderStatus, frozenset[OrderStatus]] = {
    OrderStatus.PLACED: frozenset({OrderStatus.PAID, OrderStatus.CANCELLED}),
    OrderStatus.PAID: frozenset({OrderStatus.SHIPPED, OrderStatus.CANCELLED}),
    OrderStatus.SHIPPED: frozenset({OrderStatus.DELIVERED}),
    OrderStatus.DELIVERED: frozenset(),
    OrderStatus.CANCELLED: frozenset(),
}


class OrderLine(Model):
    line_no: Annotated[int, Field(ge=1, le=MAX_ORDER_LINES)]
    product_id: ProductId
    quantity: Quantity
    unit_price: Money

    @property
    def line_total(self) -> Money:
        return Money(amount=self.unit_price.amount * self.quantity, currency=self.unit_price.currency)


class Order(Model):
    order_id: str
    user_id: UserId
    status: OrderStatus
    placed_at: str
    updated_at: str
    total: Money
    line_count: int
    version: Version
    lines: tuple[OrderLine, ...] = ()


class Restocked(Model):
    """Stock added to a product by one restock request."""

    product_id: ProductId
    quantity_added: int
    restocked_at: str


class ProductSummary(Model):
    """What the category index projects: enough for a listing, without stock (see keys docstring)."""

    product_id: ProductId
    name: str
    category: str
    price: Money


class OrderSummary(Model):
    """What the order indexes project: a row of an order list."""

    order_id: str
    user_id: UserId
    status: OrderStatus
    placed_at: str
    updated_at: str
    total: Money
    line_count: int


# -- archive (ECOM-011) and inventory snapshots ------------------------------------------------------


class BatchState(StrEnum):
    """Where an archive batch stands: its object is written (and confirmed) only in ``WRITTEN``."""

    RECORDED = "Recorded"
    WRITTEN = "Written"


class ArchiveBatch(Model):
    """The manifest of one archive batch: up to 100 orders of one month, one S3 object."""

    batch_id: str
    month: str
    object_key: str
    order_ids: tuple[str, ...]
    state: BatchState
    # MD5 (hex) of the object as last written; None until it was written once.
    md5: str | None = None
    created_at: str
    updated_at: str


class InventoryLevel(Model):
    """A product's stock level as the day's snapshot took it."""

    product_id: ProductId
    available: int
    taken_at: str
