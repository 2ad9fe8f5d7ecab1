"""Domain models of the commerce context: what services reason about (no keys, no HTTP)."""

from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from typing import Annotated, Final

from pydantic import Field

from shopfeed.commerce.types import (
    BucketCount,
    Carrier,
    ProductId,
    Quantity,
    Rating,
    TrackingNumber,
    Warehouse,
)
from shopfeed.platform.models import Model
from shopfeed.platform.types import Money, UserId, Version

# TransactWriteItems takes at most 100 items: an order writes its header, one line and one stock
# decrement per product, an outbox event, its status-history item and an idempotency record: 4 + 2n <= 100.
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
    # The total of the product's stock buckets (decision 157), not stored on the product item: each
    # bucket is bounded by MAX_STOCK, their sum by MAX_BUCKETS of them.
    available: Annotated[int, Field(ge=0)] = 0
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
    REFUNDED = "Refunded"
    # Not paid within the payment window: cancelled by the sweeper, its stock restored (decision 97).
    EXPIRED = "Expired"

    def can_become(self, target: "OrderStatus") -> bool:
        return target in _TRANSITIONS[self]


_TRANSITIONS: dict[OrderStatus, frozenset[OrderStatus]] = {
    OrderStatus.PLACED: frozenset({OrderStatus.PAID, OrderStatus.CANCELLED, OrderStatus.EXPIRED}),
    OrderStatus.PAID: frozenset({OrderStatus.SHIPPED, OrderStatus.CANCELLED}),
    OrderStatus.SHIPPED: frozenset({OrderStatus.DELIVERED, OrderStatus.RETURNED}),
    OrderStatus.DELIVERED: frozenset({OrderStatus.RETURNED}),
    # Refunded: the provider gave the payment back (the payment worker moves it; docs/data-model.md).
    OrderStatus.RETURNED: frozenset({OrderStatus.REFUNDED}),
    OrderStatus.CANCELLED: frozenset({OrderStatus.REFUNDED}),
    OrderStatus.REFUNDED: frozenset(),
    OrderStatus.EXPIRED: frozenset(),
}


class StockTake(Model):
    """Units an order line took from one stock bucket: where a cancel or an expiry puts them back."""

    warehouse: Warehouse
    bucket: int
    quantity: Quantity


class OrderLine(Model):
    line_no: Annotated[int, Field(ge=1, le=MAX_ORDER_LINES)]
    product_id: ProductId
    quantity: Quantity
    unit_price: Money
    # The buckets the line's units came from (decision 155); empty on lines placed before stock
    # was kept in buckets (their units go back to the default warehouse).
    takes: tuple[StockTake, ...] = ()

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


# The actors of moves no person makes (the status history's ``by``): the payment worker settling an
# attempt, the payment-window sweeper expiring an unpaid order.
PAYMENTS_ACTOR: Final = "system:payments"
EXPIRY_ACTOR: Final = "system:payment-window"


class OrderMove(Model):
    """One move of an order along its state machine, as its status history keeps it (HISTORY): who,
    when, from, to, why. Written in the move's own transaction, one per move."""

    order_id: str
    # The order's owner: the history Query authorises the caller with a filter, as the lines do.
    user_id: UserId
    # The order's version after the move: it names the history item, so moves sort as they happened
    # (whatever the clocks of the writers say) and one version is never recorded twice.
    version: Version
    from_status: OrderStatus | None = None  # None: the order was placed
    to_status: OrderStatus
    at: str
    by: str
    reason: str

    @classmethod
    def of(cls, before: OrderStatus | None, after: "Order", by: str, reason: str) -> "OrderMove":
        """The move that left the order as ``after`` (its status, version and update time)."""
        return cls(
            order_id=after.order_id,
            user_id=after.user_id,
            version=after.version,
            from_status=before,
            to_status=after.status,
            at=after.updated_at,
            by=by,
            reason=reason,
        )


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


class RefundStatus(StrEnum):
    PENDING = "Pending"
    REFUNDED = "Refunded"
    FAILED = "Failed"


class Refund(Model):
    """The refund of an authorized attempt: the whole amount, once (decision 103), started with the
    order's cancel or return and settled by the payment worker (``refund_id`` is the provider's
    idempotency key)."""

    refund_id: str
    status: RefundStatus
    amount: Money
    reason: OrderStatus  # what started it: the order Cancelled or Returned
    requested_at: str
    updated_at: str
    provider_reference: str | None = None
    decline_code: str | None = None


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
    refund: Refund | None = None


# -- shipments --------------------------------------------------------------------------------------


class ShipmentStatus(StrEnum):
    CREATED = "Created"
    SHIPPED = "Shipped"
    DELIVERED = "Delivered"
    RETURNED = "Returned"
    CANCELLED = "Cancelled"  # a parcel not shipped yet, cancelled with its paid order

    def can_become(self, target: "ShipmentStatus") -> bool:
        return target in _SHIPMENT_TRANSITIONS[self]

    @property
    def order_status(self) -> OrderStatus | None:
        """The order status a shipment reaching this status moves its order to (when the order's own
        state machine admits it); None for a new shipment, which leaves the order as it is."""
        return _ORDER_STATUS_OF.get(self)


_SHIPMENT_TRANSITIONS: dict[ShipmentStatus, frozenset[ShipmentStatus]] = {
    ShipmentStatus.CREATED: frozenset({ShipmentStatus.SHIPPED}),  # Cancelled only with its order
    ShipmentStatus.SHIPPED: frozenset({ShipmentStatus.DELIVERED, ShipmentStatus.RETURNED}),
    ShipmentStatus.DELIVERED: frozenset({ShipmentStatus.RETURNED}),
    ShipmentStatus.RETURNED: frozenset(),
    ShipmentStatus.CANCELLED: frozenset(),
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


# -- stock as items (issue 18) -------------------------------------------------------------------

# Where a product's stock goes when nobody names a warehouse: product creation, POST /stock, and the
# backfill of the single stock number products had before buckets.
DEFAULT_WAREHOUSE: Final = "MAIN"


class BucketRef(Model):
    """One stock bucket of a product: a warehouse and the bucket's number in it (0-based)."""

    warehouse: Warehouse
    bucket: Annotated[int, Field(ge=0)]


class StockLayout(Model):
    """How a product's stock is split: warehouse → bucket count (data: admins change it), the unit
    price every bucket carries (an order's price guard sits on the bucket it takes from), and the
    layout's version (ETag of the inventory; a resize or a price change bumps it).

    ``price_version`` counts price changes: a bucket carries the one it was priced at (``priced``),
    and ``repricing`` says a price change has not yet opened every bucket at it (decision 225)."""

    product_id: ProductId
    warehouses: dict[Warehouse, BucketCount]
    price: Money
    version: Version
    price_version: int = 1
    repricing: bool = False

    @property
    def buckets(self) -> tuple[BucketRef, ...]:
        """Every bucket of the layout, warehouse by warehouse, in bucket order."""
        return tuple(
            BucketRef(warehouse=warehouse, bucket=n)
            for warehouse, count in sorted(self.warehouses.items())
            for n in range(count)
        )

    def holds(self, ref: BucketRef) -> bool:
        return ref.bucket < self.warehouses.get(ref.warehouse, 0)


class BucketLevel(Model):
    """A bucket's stock as one strongly consistent read saw it."""

    warehouse: Warehouse
    bucket: int
    available: int

    @property
    def ref(self) -> BucketRef:
        return BucketRef(warehouse=self.warehouse, bucket=self.bucket)


class InventoryLevel(Model):
    """A product's stock level as the day's snapshot took it, in all and per warehouse."""

    product_id: ProductId
    available: int
    taken_at: str
    # Snapshots taken before stock was kept by warehouse have none.
    warehouses: dict[str, int] = Field(default_factory=dict)


# -- the cart (seed 001, AP 8) --------------------------------------------------------------------

# Checkout writes, in one TransactWriteItems: the order header, per line an order line, a stock
# decrement and a cart-line delete, the cart header, the outbox event, the order's first history item
# and the key record: 3n + 5 items. 30 lines take 95 of DynamoDB's 100.
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
