"""Domain models of the commerce context: what services reason about (no keys, no HTTP)."""

from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from typing import Annotated, Final

from pydantic import Field

from shopfeed.commerce.types import Carrier, ProductId, Quantity, Rating, StockLevel, TrackingNumber
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


class RatingTotals(Model):
    """A product's review counters, kept by the stream consumer from review records (not versioned:
    a review never changes the product's ETag)."""

    count: int = 0
    sum: int = 0

    @property
    def average(self) -> Decimal | None:
        """The mean rating to one decimal, halves rounded up (4.25 → 4.3); None without reviews."""
        if self.count <= 0:
            return None
        return (Decimal(self.sum) / Decimal(self.count)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


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
    # A factory, not an instance: building one here would build its validator at import (decision 15).
    rating: RatingTotals = Field(default_factory=RatingTotals)


# -- reviews ------------------------------------------------------------------------------------


class ReviewOrder(StrEnum):
    """The orders of a product's reviews (``GET /products/{id}/reviews?sort=``)."""

    RECENT = "recent"  # newest first
    RATING = "rating"  # best first, ties newest first


class ReviewSummary(Model):
    """A review as the review indexes project it: a row of a list."""

    product_id: ProductId
    user_id: UserId
    rating: Rating
    title: str
    text: str
    created_at: str
    updated_at: str


class Review(ReviewSummary):
    """One user's review of one product (its natural key); ``version`` guards edits (If-Match)."""

    version: Version


class OrderStatus(StrEnum):
    PLACED = "Placed"
    PAID = "Paid"
    SHIPPED = "Shipped"
    DELIVERED = "Delivered"
    RETURNED = "Returned"
    CANCELLED = "Cancelled"

    def can_become(self, target: "OrderStatus") -> bool:
        return target in _TRANSITIONS[self]


_TRANSITIONS: dict[OrderStatus, frozenset[OrderStatus]] = {
    OrderStatus.PLACED: frozenset({OrderStatus.PAID, OrderStatus.CANCELLED}),
    OrderStatus.PAID: frozenset({OrderStatus.SHIPPED, OrderStatus.CANCELLED}),
    OrderStatus.SHIPPED: frozenset({OrderStatus.DELIVERED, OrderStatus.RETURNED}),
    OrderStatus.DELIVERED: frozenset({OrderStatus.RETURNED}),
    OrderStatus.RETURNED: frozenset(),
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


# -- payments ---------------------------------------------------------------------------------------


class PaymentStatus(StrEnum):
    PENDING = "Pending"
    AUTHORIZED = "Authorized"
    DECLINED = "Declined"


class PaymentAttempt(Model):
    """One attempt to pay an order: written Pending by the API, settled once by the payment worker.

    ``payment_method`` is the provider's opaque token; it is kept only until the provider has
    answered (settling removes it) and never shown by the API.
    """

    attempt_id: str
    order_id: str
    user_id: UserId
    status: PaymentStatus
    amount: Money
    created_at: str
    updated_at: str
    payment_method: str | None = None
    provider_reference: str | None = None
    decline_code: str | None = None


# -- shipments --------------------------------------------------------------------------------------


class ShipmentStatus(StrEnum):
    CREATED = "Created"
    SHIPPED = "Shipped"
    DELIVERED = "Delivered"
    RETURNED = "Returned"

    def can_become(self, target: "ShipmentStatus") -> bool:
        return target in _SHIPMENT_TRANSITIONS[self]

    @property
    def order_status(self) -> OrderStatus | None:
        """The order status a shipment reaching this status moves its order to (when the order's own
        state machine admits it); None for a new shipment, which leaves the order as it is."""
        return _ORDER_STATUS_OF.get(self)


_SHIPMENT_TRANSITIONS: dict[ShipmentStatus, frozenset[ShipmentStatus]] = {
    ShipmentStatus.CREATED: frozenset({ShipmentStatus.SHIPPED}),
    ShipmentStatus.SHIPPED: frozenset({ShipmentStatus.DELIVERED, ShipmentStatus.RETURNED}),
    ShipmentStatus.DELIVERED: frozenset({ShipmentStatus.RETURNED}),
    ShipmentStatus.RETURNED: frozenset(),
}
_ORDER_STATUS_OF: dict[ShipmentStatus, OrderStatus] = {
    ShipmentStatus.SHIPPED: OrderStatus.SHIPPED,
    ShipmentStatus.DELIVERED: OrderStatus.DELIVERED,
    ShipmentStatus.RETURNED: OrderStatus.RETURNED,
}


class Shipment(Model):
    """A parcel of an order. An order may have several (split shipments); each moves on its own."""

    shipment_id: str
    order_id: str
    user_id: UserId
    carrier: Carrier
    tracking_number: TrackingNumber | None = None
    status: ShipmentStatus
    created_at: str
    updated_at: str
    version: Version


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


# -- the cart (seed 001, AP 8) --------------------------------------------------------------------

# Checkout writes, in one TransactWriteItems: the order header, per line an order line, a stock
# decrement and a cart-line delete, the cart header, the outbox event and the key record: 3n + 4
# items. 30 lines take 94 of DynamoDB's 100, leaving room for an item or two more in the placement.
MAX_CART_LINES: Final = 30
MAX_CART_QUANTITY: Final = 100


class CartLine(Model):
    """One product in a cart, at the unit price the product had when the line was last put."""

    product_id: ProductId
    quantity: Annotated[int, Field(ge=1, le=MAX_CART_QUANTITY)]
    unit_price: Money
    added_at: str
    updated_at: str
    expires_at: int  # epoch seconds (TTL); never before the cart's own

    @property
    def line_total(self) -> Money:
        return Money(amount=self.unit_price.amount * self.quantity, currency=self.unit_price.currency)


class Cart(Model):
    """A user's cart as stored: ``version`` 0 until its first change. Past ``expires_at`` it is
    abandoned: it reads as empty (TTL deletes its items within days), its version goes on."""

    user_id: UserId
    version: Annotated[int, Field(ge=0)] = 0
    updated_at: str | None = None
    expires_at: int | None = None
    lines: tuple[CartLine, ...] = ()

    def expired(self, now: int) -> bool:
        return self.expires_at is None or self.expires_at <= now

    def line(self, product_id: str) -> CartLine | None:
        return next((line for line in self.lines if line.product_id == product_id), None)
