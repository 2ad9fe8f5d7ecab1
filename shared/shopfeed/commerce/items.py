"""Stored item shapes of CommerceTable and their explicit mapping to and from domain models.

``entity_type`` is written on every item: stream consumers route on it, so its values are a
persisted contract and never change.
"""

from typing import Any, Final

from shopfeed.commerce import keys
from shopfeed.commerce.models import (
    ArchiveBatch,
    Customer,
    InventoryLevel,
    Order,
    OrderLine,
    OrderSummary,
    PaymentAttempt,
    PaymentStatus,
    Product,
    ProductSummary,
    RatingTotals,
    Review,
    ReviewSummary,
    Shipment,
)
from shopfeed.platform.dynamo import Update
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
OUTBOX_EVENT: Final = "OutboxEvent"

Item = dict[str, Any]

# Attributes the order indexes project (template.yaml lists the same; a template test compares).
ORDER_SUMMARY_ATTRIBUTES: Final = (
    "order_id",
    "user_id",
    "status",
    "placed_at",
    "updated_at",
    "total",
    "line_count",
)
PRODUCT_SUMMARY_ATTRIBUTES: Final = ("product_id", "name", "category", "price")
OUTBOX_ATTRIBUTES: Final = ("event_id", "event_type", "source", "aggregate_id", "occurred_at", "detail")


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
    # The rating counters are the consumer's alone: a product is written without them.
    return {
        **keys.product(product.product_id),
        **keys.product_by_category(product.category, product.product_id),
        **keys.product_in_catalog(product.product_id),
        "entity_type": PRODUCT,
        **product.model_dump(exclude={"rating"}),
    }


def product_from(item: Item) -> Product:
    fields = {k: item[k] for k in Product.model_fields if k != "rating"}
    rating = RatingTotals(count=int(item.get(RATING_COUNT, 0)), sum=int(item.get(RATING_SUM, 0)))
    return Product.model_validate({**fields, "rating": rating})


def product_summary_from(item: Item) -> ProductSummary:
    return ProductSummary.model_validate({k: item[k] for k in PRODUCT_SUMMARY_ATTRIBUTES})


# -- reviews ------------------------------------------------------------------------------------

REVIEW: Final = "Review"

# What the three review indexes project: a list row (template.yaml lists the same; a template test compares).
REVIEW_SUMMARY_ATTRIBUTES: Final = tuple(ReviewSummary.model_fields)


def review_item(review: Review) -> Item:
    return {
        **keys.review(review.product_id, review.user_id),
        **keys.review_orders(review.product_id, review.user_id, review.rating, review.created_at),
        "entity_type": REVIEW,
        **review.model_dump(),
    }


def review_from(item: Item) -> Review:
    return Review.model_validate({k: item[k] for k in Review.model_fields})


def review_summary_from(item: Item) -> ReviewSummary:
    return ReviewSummary.model_validate({k: item[k] for k in REVIEW_SUMMARY_ATTRIBUTES})


def order_item(order: Order) -> Item:
    return {
        **keys.order(order.order_id),
        **keys.order_by_user(order.user_id, order.placed_at, order.order_id),
        **keys.order_by_status(order.status, order.placed_at, order.order_id),
        **keys.order_by_age(order.placed_at, order.order_id),
        "entity_type": ORDER,
        **order.model_dump(exclude={"lines"}),
    }


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
    )


def order_summary_from(item: Item) -> OrderSummary:
    return OrderSummary.model_validate({k: item[k] for k in ORDER_SUMMARY_ATTRIBUTES})


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

# On the order header while one of its attempts is in flight: the id of that attempt. Starting a
# payment and cancelling both require it absent, so one payment at a time and never a cancel under it.
PAYMENT_PENDING: Final = "payment_pending"
# What PendingPayments projects, and ShipmentsByOrder / ShipmentsByStatus (template.yaml lists the
# same; a template test compares): exactly what the list readers map.
PAYMENT_ATTRIBUTES: Final = ("attempt_id", "order_id", "user_id", "status", "amount", "created_at", "updated_at")
SHIPMENT_ATTRIBUTES: Final = (
    "shipment_id",
    "order_id",
    "user_id",
    "carrier",
    "tracking_number",
    "status",
    "created_at",
    "updated_at",
    "version",
)


def purchase_change(user_id: str, product_id: str, delta: int) -> tuple[keys.Key, Update]:
    """The proof-of-purchase change of one product: +1 when an order holding it is paid, -1 when a paid
    order is cancelled. The first change creates the item, always with its identity."""
    identity = {"entity_type": PURCHASE, "user_id": user_id, "product_id": product_id}
    return keys.purchase(user_id, product_id), Update(set_if_absent=identity, add={PAID_ORDERS: delta})


def payment_attempt_item(attempt: PaymentAttempt) -> Item:
    """A new attempt; a Pending one carries the sparse PendingPayments keys."""
    pending = (
        keys.pending_payment(attempt.attempt_id, attempt.created_at) if attempt.status is PaymentStatus.PENDING else {}
    )
    return {
        **keys.payment_attempt(attempt.order_id, attempt.attempt_id),
        **pending,
        "entity_type": PAYMENT_ATTEMPT,
        **attempt.model_dump(exclude_none=True),
    }


def payment_attempt_from(item: Item) -> PaymentAttempt:
    """From the base table or from the PendingPayments projection (which has no token or outcome)."""
    return PaymentAttempt.model_validate({k: item[k] for k in PaymentAttempt.model_fields if k in item})


def shipment_item(shipment: Shipment) -> Item:
    return {
        **keys.shipment(shipment.order_id, shipment.shipment_id),
        **shipment_index_keys(shipment),
        "entity_type": SHIPMENT,
        **shipment.model_dump(exclude_none=True),
    }


def shipment_index_keys(shipment: Shipment) -> Item:
    """Both list keys move with every update: they sort by ``updated_at``."""
    return {
        **keys.shipment_by_order(shipment.order_id, shipment.updated_at, shipment.shipment_id),
        **keys.shipment_by_status(shipment.status, shipment.carrier, shipment.updated_at, shipment.shipment_id),
    }


def shipment_from(item: Item) -> Shipment:
    return Shipment.model_validate({k: item[k] for k in Shipment.model_fields if k in item})


# -- archive (ECOM-011) and inventory snapshots ------------------------------------------------------

ARCHIVE_BATCH: Final = "ArchiveBatch"
ARCHIVE_LEASE: Final = "ArchiveLease"
INVENTORY_SNAPSHOT: Final = "InventorySnapshot"
# What the snapshot job reads of a product (BatchGetItem projection).
STOCK_ATTRIBUTES: Final = ("product_id", "available")


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
    return InventoryLevel.model_validate({k: item[k] for k in InventoryLevel.model_fields})
