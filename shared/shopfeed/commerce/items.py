"""Stored item shapes of CommerceTable and their explicit mapping to and from domain models. Every
item takes its index keys from the declarations in ``keys`` (``indexed``), never spelled here.

``entity_type`` is written on every item: stream consumers route on it, so its values are a
persisted contract and never change.
"""

from typing import Any, Final

from shopfeed.commerce import keys
from shopfeed.commerce.models import (
    ArchiveBatch,
    BucketLevel,
    BucketRef,
    Cart,
    CartLine,
    Customer,
    InventoryLevel,
    Order,
    OrderLine,
    OrderMove,
    OrderSummary,
    PaymentAttempt,
    Product,
    ProductSummary,
    RatingTotals,
    Review,
    ReviewSummary,
    Shipment,
    StockLayout,
    StockTake,
)
from shopfeed.platform.dynamo import Update, indexed
from shopfeed.platform.outbox import OutboxEvent, OutboxKeys, event_from
from shopfeed.platform.types import Money

CUSTOMER: Final = "Customer"
EMAIL_GUARD: Final = "EmailGuard"
PURCHASE: Final = "Purchase"
# The proof of purchase's count of the user's paid, not cancelled orders of the product (payments keep it).
PAID_ORDERS: Final = "paid_orders"
PRODUCT: Final = "Product"
ORDER: Final = "Order"
ORDER_LINE: Final = "OrderLine"
ORDER_HISTORY: Final = "OrderHistory"
OUTBOX_EVENT: Final = "OutboxEvent"
# The guard of an event's customer email (commerce.emails.repository).
EMAIL_NOTICE: Final = "EmailNotice"

Item = dict[str, Any]


def _money(value: dict[str, Any]) -> Money:
    return Money(amount=int(value["amount"]), currency=value["currency"])


def customer_item(customer: Customer) -> Item:
    return {**keys.user(customer.user_id), "entity_type": CUSTOMER, **customer.model_dump()}


def email_guard_item(customer: Customer) -> Item:
    return {**keys.email_guard(customer.email), "entity_type": EMAIL_GUARD, "user_id": customer.user_id}


def customer_from(item: Item) -> Customer:
    # Profiles written before email_verified existed lack it (its default applies).
    return Customer.model_validate({k: item[k] for k in Customer.model_fields if k in item})


# A product's rating counters, kept by the stream consumer from review records (ADD, never a Put).
RATING_COUNT: Final = "rating_count"
RATING_SUM: Final = "rating_sum"


def product_item(product: Product) -> Item:
    # The rating counters are the consumer's alone: a product is written without them. Its stock is
    # in its buckets (stock_bucket_item), never on the product item.
    dumped = product.model_dump(exclude={"rating", "available"})
    return indexed(keys.INDEXES, {**keys.product(product.product_id), "entity_type": PRODUCT, **dumped})


def product_from(item: Item, available: int | None = None) -> Product:
    """``available`` is the total of the product's buckets; without it, the number a product item kept
    before its stock moved to buckets (the backfill removes it), else 0."""
    fields = {k: item[k] for k in Product.model_fields if k not in ("rating", "available")}
    rating = RatingTotals(count=int(item.get(RATING_COUNT, 0)), sum=int(item.get(RATING_SUM, 0)))
    stock = int(item.get(LEGACY_AVAILABLE, 0)) if available is None else available
    return Product.model_validate({**fields, "available": stock, "rating": rating})


# -- stock as items (issue 18) -------------------------------------------------------------------

STOCK_LAYOUT: Final = "StockLayout"
STOCK_BUCKET: Final = "StockBucket"
# A bucket's price version, and the mark of a bucket closed while a price change is written (it
# holds the price version being written: decision 225).
PRICED: Final = "priced"
SEALED: Final = "sealed"
# The single stock number a product item kept before buckets; the backfill moves it into them.
LEGACY_AVAILABLE: Final = "available"


def stock_layout_item(layout: StockLayout) -> Item:
    return {**keys.stock_layout(layout.product_id), "entity_type": STOCK_LAYOUT, **layout.model_dump()}


def stock_layout_from(item: Item) -> StockLayout:
    return StockLayout(
        product_id=item["product_id"],
        warehouses={str(w): int(n) for w, n in item["warehouses"].items()},
        price=_money(item["price"]),
        version=int(item["version"]),
        # Layouts written before stepwise repricing have neither: their buckets are at version 1.
        price_version=int(item.get("price_version", 1)),
        repricing=bool(item.get("repricing", False)),
    )


def stock_bucket_item(layout: StockLayout, ref: BucketRef, available: int) -> Item:
    """A bucket carries the product's price: an order's price guard is on the bucket it takes from,
    so placing an order never touches the product item (decision 153)."""
    return {
        **keys.stock_bucket(layout.product_id, ref.warehouse, ref.bucket),
        "entity_type": STOCK_BUCKET,
        "product_id": layout.product_id,
        "warehouse": ref.warehouse,
        "bucket": ref.bucket,
        "available": available,
        "price": layout.price.model_dump(),
        PRICED: layout.price_version,
    }


def bucket_level_from(item: Item) -> BucketLevel:
    return BucketLevel(warehouse=item["warehouse"], bucket=int(item["bucket"]), available=int(item["available"]))


def product_summary_from(item: Item) -> ProductSummary:
    return ProductSummary.model_validate({k: item[k] for k in keys.PRODUCT_SUMMARY_ATTRIBUTES})


# -- reviews ------------------------------------------------------------------------------------

REVIEW: Final = "Review"


def review_item(review: Review) -> Item:
    return indexed(
        keys.INDEXES, {**keys.review(review.product_id, review.user_id), "entity_type": REVIEW, **review.model_dump()}
    )


def review_from(item: Item) -> Review:
    return Review.model_validate({k: item[k] for k in Review.model_fields})


def review_summary_from(item: Item) -> ReviewSummary:
    return ReviewSummary.model_validate({k: item[k] for k in keys.REVIEW_SUMMARY_ATTRIBUTES})


def order_item(order: Order) -> Item:
    return indexed(
        keys.INDEXES, {**keys.order(order.order_id), "entity_type": ORDER, **order.model_dump(exclude={"lines"})}
    )


def order_line_item(order: Order, line: OrderLine) -> Item:
    # user_id lets a lines Query authorise the caller with a filter instead of a second read.
    return {
        **keys.order_line(order.order_id, line.line_no),
        "entity_type": ORDER_LINE,
        "order_id": order.order_id,
        "user_id": order.user_id,
        **line.model_dump(),
    }


def order_from(item: Item, lines: list[Item] | tuple[()] = ()) -> Order:
    fields = {k: item[k] for k in Order.model_fields if k != "lines"}
    return Order.model_validate({**fields, "lines": [order_line_from(line) for line in lines]})


def order_line_from(item: Item) -> OrderLine:
    return OrderLine(
        line_no=keys.parse_line_no(item["SK"]),
        product_id=item["product_id"],
        quantity=int(item["quantity"]),
        unit_price=_money(item["unit_price"]),
        takes=tuple(
            StockTake(warehouse=t["warehouse"], bucket=int(t["bucket"]), quantity=int(t["quantity"]))
            for t in item.get("takes", ())
        ),
    )


def order_history_item(move: OrderMove) -> Item:
    """The status-history item of one move (``orders.repository.history_op`` puts it in a move's
    own transaction)."""
    return {
        **keys.order_history(move.order_id, move.version),
        "entity_type": ORDER_HISTORY,
        **move.model_dump(exclude_none=True),
    }


def order_move_from(item: Item) -> OrderMove:
    return OrderMove.model_validate({k: item[k] for k in OrderMove.model_fields if k in item})


def order_summary_from(item: Item) -> OrderSummary:
    return OrderSummary.model_validate({k: item[k] for k in keys.ORDER_SUMMARY_ATTRIBUTES})


# The commerce outbox: its items in CommerceTable, for the platform's relay and sweeper.
OUTBOX: Final = OutboxKeys(
    entity_type=OUTBOX_EVENT,
    item_key=keys.outbox,
    unpublished_key=keys.outbox_unpublished,
    unpublished=keys.UNPUBLISHED_OUTBOX,
    partitions=tuple(keys.unpublished_partition(shard) for shard in range(keys.OUTBOX_SHARDS)),
    event_id_of=keys.parse_event_id,
)


def outbox_item(event: OutboxEvent) -> Item:
    return OUTBOX.item(event)


def outbox_event_from(item: Item) -> OutboxEvent:
    return event_from(item)


# -- payments and shipments -----------------------------------------------------------------------

PAYMENT_ATTEMPT: Final = "PaymentAttempt"
SHIPMENT: Final = "Shipment"
SANDBOX_CHARGE: Final = "SandboxCharge"
SANDBOX_REFUND: Final = "SandboxRefund"

# On the order header while one of its attempts is in flight: the id of that attempt. Starting a
# payment and cancelling both require it absent, so one payment at a time and never a cancel under it.
PAYMENT_PENDING: Final = "payment_pending"
# On the order header while its refund is in flight: the refund's id (the payment worker's guard).
REFUND_PENDING: Final = "refund_pending"
# On an authorized attempt: the minor units refunded or being refunded. Starting a refund adds to it
# under the condition that it stays within the amount captured (decision 104); a declined refund
# takes its amount back off.
REFUNDED: Final = "refunded"


def purchase_change(user_id: str, product_id: str, delta: int) -> tuple[keys.Key, Update]:
    """The proof-of-purchase change of one product: +1 when an order holding it is paid, -1 when a paid
    order is cancelled. The first change creates the item, always with its identity."""
    identity = {"entity_type": PURCHASE, "user_id": user_id, "product_id": product_id}
    return keys.purchase(user_id, product_id), Update(set_if_absent=identity, add={PAID_ORDERS: delta})


def payment_attempt_item(attempt: PaymentAttempt) -> Item:
    """A new attempt; a Pending one carries the sparse PendingPayments keys."""
    return indexed(
        keys.INDEXES,
        {
            **keys.payment_attempt(attempt.order_id, attempt.attempt_id),
            "entity_type": PAYMENT_ATTEMPT,
            **attempt.model_dump(exclude_none=True),
        },
    )


def payment_attempt_from(item: Item) -> PaymentAttempt:
    """From the base table or from the PendingPayments projection (which has no token or outcome)."""
    return PaymentAttempt.model_validate({k: item[k] for k in PaymentAttempt.model_fields if k in item})


def shipment_item(shipment: Shipment) -> Item:
    return indexed(
        keys.INDEXES,
        {
            **keys.shipment(shipment.order_id, shipment.shipment_id),
            "entity_type": SHIPMENT,
            **shipment.model_dump(exclude_none=True),
        },
    )


def shipment_from(item: Item) -> Shipment:
    return Shipment.model_validate({k: item[k] for k in Shipment.model_fields if k in item})


# -- archive (ECOM-011) and inventory snapshots ------------------------------------------------------

ARCHIVE_BATCH: Final = "ArchiveBatch"
ARCHIVE_LEASE: Final = "ArchiveLease"
INVENTORY_SNAPSHOT: Final = "InventorySnapshot"
# What the snapshot job reads of a product not backfilled yet (BatchGetItem projection).
STOCK_ATTRIBUTES: Final = ("product_id", LEGACY_AVAILABLE)


def archive_batch_item(batch: ArchiveBatch) -> Item:
    return {**keys.archive_batch(batch.batch_id), "entity_type": ARCHIVE_BATCH, **batch.model_dump(mode="json")}


def archive_batch_from(item: Item) -> ArchiveBatch:
    return ArchiveBatch.model_validate({k: item[k] for k in ArchiveBatch.model_fields if k in item})


def archive_lease_item(run_id: str, held_until: str) -> Item:
    return {**keys.archive_lease(), "entity_type": ARCHIVE_LEASE, "run_id": run_id, "held_until": held_until}


def snapshot_item(day: str, level: InventoryLevel, expires_at: int) -> Item:
    return {
        **keys.snapshot(day, level.product_id),
        "entity_type": INVENTORY_SNAPSHOT,
        "day": day,
        **level.model_dump(),
        "expires_at": expires_at,
    }


def inventory_level_from(item: Item) -> InventoryLevel:
    return InventoryLevel.model_validate({k: item[k] for k in InventoryLevel.model_fields if k in item})


# -- the cart (seed 001, AP 8) --------------------------------------------------------------------

CART: Final = "Cart"
CART_LINE: Final = "CartLine"


def cart_header_change(cart: Cart) -> Update:
    """The header as ``cart`` leaves it (its version is added by the caller's guarded update)."""
    identity = {"entity_type": CART, "user_id": cart.user_id}
    return Update(set={"updated_at": cart.updated_at, "expires_at": cart.expires_at}, set_if_absent=identity)


def cart_line_item(user_id: str, line: CartLine) -> Item:
    return {
        **keys.cart_line(user_id, line.product_id),
        "entity_type": CART_LINE,
        "user_id": user_id,
        **line.model_dump(),
    }


def cart_from(user_id: str, found: list[Item]) -> Cart:
    """A cart from its Query: the header (SK ``CART``) and its lines, in product order."""
    header = next((i for i in found if i["SK"] == keys.CART), None)
    lines = tuple(
        CartLine(
            product_id=keys.parse_cart_product(i["SK"]),
            quantity=int(i["quantity"]),
            unit_price=_money(i["unit_price"]),
            added_at=i["added_at"],
            updated_at=i["updated_at"],
            expires_at=int(i["expires_at"]),
        )
        for i in found
        if i["SK"] != keys.CART
    )
    if header is None:
        return Cart(user_id=user_id, lines=lines)
    return Cart(
        user_id=user_id,
        version=int(header["version"]),
        updated_at=header["updated_at"],
        expires_at=int(header["expires_at"]),
        lines=lines,
    )
