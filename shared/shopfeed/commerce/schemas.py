"""HTTP request and response models of the commerce API (the OpenAPI document is generated from them)."""

from typing import Annotated

from pydantic import Field, Strict, StringConstraints

from shopfeed.commerce.models import (
    MAX_ORDER_LINES,
    BucketLevel,
    InventoryLevel,
    Order,
    OrderLine,
    OrderStatus,
    OrderSummary,
    PaymentStatus,
    Product,
    ProductSummary,
    RatingTotals,
    RefundStatus,
    Restocked,
    ShipmentStatus,
    StockLayout,
)
from shopfeed.commerce.types import BucketCount, Carrier, ProductId, Quantity, StockLevel, TrackingNumber
from shopfeed.platform.models import Request, View
from shopfeed.platform.search import SearchHit
from shopfeed.platform.types import JSON_INTEGER, MULTI_LINE, SINGLE_LINE, Money

MAX_RESTOCK = 1_000_000
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120), SINGLE_LINE]
Text = Annotated[str, StringConstraints(max_length=4000), MULTI_LINE]
Category = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9\-]*$")]


class CreateProduct(Request):
    product_id: ProductId
    name: Name
    description: Text = ""
    category: Category
    price: Money
    available: StockLevel = 0


class UpdateProduct(Request):
    name: Name | None = None
    description: Text | None = None
    category: Category | None = None
    price: Money | None = None


class Restock(Request):
    quantity: Annotated[int, Strict(), Field(ge=1, le=MAX_RESTOCK), JSON_INTEGER]


class OrderLineRequest(Request):
    product_id: ProductId
    quantity: Quantity
    unit_price: Annotated[Money, Field(description="The price the customer was shown; the order fails if it changed.")]


class PlaceOrder(Request):
    lines: Annotated[list[OrderLineRequest], Field(min_length=1, max_length=MAX_ORDER_LINES)]


class RatingView(View):
    """A product's reviews in two figures, kept by the stream consumer (a new review shows within seconds)."""

    count: int
    average: Annotated[float | None, Field(description="Mean rating to one decimal (halves up); null without reviews")]

    @classmethod
    def of(cls, totals: RatingTotals) -> "RatingView":
        average = totals.average
        return cls(count=max(totals.count, 0), average=float(average) if average is not None else None)


class ProductView(View):
    product_id: str
    name: str
    description: str
    category: str
    price: Money
    available: int
    updated_at: str
    rating: RatingView

    @classmethod
    def of(cls, product: Product) -> "ProductView":
        fields = product.model_dump(include=set(cls.model_fields) - {"rating"})
        return cls.model_validate({**fields, "rating": RatingView.of(product.rating)})


class ProductPage(View):
    items: list[ProductSummary]
    next_cursor: str | None


class ProductHit(View):
    """A search result: what a result row shows. Stock is not indexed: GET /products/{id} has it."""

    product_id: str
    name: str
    description: str
    category: str
    price: Money
    score: float

    @classmethod
    def of(cls, hit: SearchHit) -> "ProductHit":
        return cls.model_validate({**hit.body, "score": hit.score})


class ProductSearchPage(View):
    items: list[ProductHit]
    next_cursor: str | None


class RestockView(View):
    product_id: str
    quantity_added: int
    restocked_at: str

    @classmethod
    def of(cls, restocked: Restocked) -> "RestockView":
        return cls.model_validate(restocked.model_dump())


class OrderLineView(View):
    line_no: int
    product_id: str
    quantity: int
    unit_price: Money
    line_total: Money

    @classmethod
    def of(cls, line: OrderLine) -> "OrderLineView":
        return cls(**line.model_dump(), line_total=line.line_total)


class OrderView(View):
    order_id: str
    user_id: str
    status: OrderStatus
    placed_at: str
    updated_at: str
    total: Money
    lines: list[OrderLineView]

    @classmethod
    def of(cls, order: Order) -> "OrderView":
        return cls(
            **order.model_dump(include={"order_id", "user_id", "status", "placed_at", "updated_at", "total"}),
            lines=[OrderLineView.of(line) for line in order.lines],
        )


class OrderLinePage(View):
    items: list[OrderLineView]
    next_cursor: str | None


class OrderPage(View):
    items: list[OrderSummary]
    next_cursor: str | None


class OrderMoveView(View):
    """One move of an order: who (a user id, or ``system:<job>``), when, from (null: placed), to, why."""

    version: int
    from_status: OrderStatus | None
    to_status: OrderStatus
    at: str
    by: str
    reason: str


class OrderHistoryPage(View):
    items: list[OrderMoveView]
    next_cursor: str | None


# -- payments ---------------------------------------------------------------------------------------

# The provider's token for a payment method, made by its client SDK in the customer's browser: opaque,
# bounded, and starting with a letter, so a card number (all digits) is refused before anything reads it.
PaymentMethodToken = Annotated[
    str, StringConstraints(min_length=1, max_length=255, pattern=r"^[A-Za-z][A-Za-z0-9_\-:.$/+=]*$")
]


class PayOrder(Request):
    amount: Annotated[Money, Field(description="The order total the customer was shown; nothing is charged if not.")]
    payment_method: Annotated[
        PaymentMethodToken, Field(description="The payment provider's token from its client SDK, never card data")
    ]


class RefundView(View):
    """The refund of an authorized payment: the whole amount, started when the order was cancelled
    or returned; Pending until the provider answers, then Refunded or Failed (declined)."""

    refund_id: str
    status: RefundStatus
    amount: Money
    reason: OrderStatus
    requested_at: str
    updated_at: str
    provider_reference: str | None = None
    decline_code: str | None = None


class PaymentView(View):
    attempt_id: str
    order_id: str
    user_id: str
    status: PaymentStatus
    amount: Money
    created_at: str
    updated_at: str
    provider_reference: str | None = None
    decline_code: str | None = None
    refund: RefundView | None = None


class PaymentPage(View):
    items: list[PaymentView]
    next_cursor: str | None


# -- shipments --------------------------------------------------------------------------------------


class CreateShipment(Request):
    carrier: Annotated[Carrier, Field(description="The carrier's slug, lower case (dhl, ups, la-poste)")]
    tracking_number: TrackingNumber | None = None


class UpdateShipment(Request):
    status: Annotated[
        ShipmentStatus, Field(description="Created → Shipped → Delivered or Returned; Delivered → Returned")
    ]
    tracking_number: TrackingNumber | None = None


class ShipmentView(View):
    shipment_id: str
    order_id: str
    user_id: str
    carrier: str
    tracking_number: str | None = None
    status: ShipmentStatus
    created_at: str
    updated_at: str
    version: int


class ShipmentPage(View):
    items: list[ShipmentView]
    next_cursor: str | None


class BucketView(View):
    bucket: int
    available: int


class WarehouseView(View):
    warehouse: str
    available: Annotated[int, Field(description="The units of every bucket of the warehouse")]
    buckets: list[BucketView]


class InventoryView(View):
    """A product's stock by warehouse and bucket, read strongly consistent (STOCK, seed 001 AP 7). The
    ETag is the layout's version: PUT .../inventory/{warehouse} names it in If-Match."""

    product_id: str
    available: int
    warehouses: list[WarehouseView]

    @classmethod
    def of(cls, layout: StockLayout, levels: list[BucketLevel]) -> "InventoryView":
        warehouses = []
        for warehouse in sorted(layout.warehouses):
            buckets = [BucketView(bucket=b.bucket, available=b.available) for b in levels if b.warehouse == warehouse]
            total = sum(bucket.available for bucket in buckets)
            warehouses.append(WarehouseView(warehouse=warehouse, available=total, buckets=buckets))
        return cls(product_id=layout.product_id, available=sum(w.available for w in warehouses), warehouses=warehouses)


class AdjustInventory(Request):
    """Units added to the warehouse, and (or) its bucket count: a hot product's stock is split into
    more buckets before a sale (each bucket its own partition). The warehouse's units are spread evenly
    over its buckets; none is made or lost but the restock."""

    restock: Annotated[int, Strict(), Field(ge=0, le=MAX_RESTOCK), JSON_INTEGER] = 0
    buckets: BucketCount | None = None


class SnapshotPage(View):
    """A page of one day's inventory snapshot."""

    date: str
    items: list[InventoryLevel]
    next_cursor: str | None
