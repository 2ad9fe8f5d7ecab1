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
    Product,
    ProductSummary,
)
from shopfeed.platform.outbox import OutboxEvent, OutboxKeys, event_from
from shopfeed.platform.types import Money

CUSTOMER: Final = "Customer"
EMAIL_GUARD: Final = "EmailGuard"
PURCHASE: Final = "Purchase"
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


def product_item(product: Product) -> Item:
    return {
        **keys.product(product.product_id),
        **keys.product_by_category(product.category, product.product_id),
        **keys.product_in_catalog(product.product_id),
        "entity_type": PRODUCT,
        **product.model_dump(),
    }


def product_from(item: Item) -> Product:
    return Product.model_validate({k: item[k] for k in Product.model_fields})


def product_summary_from(item: Item) -> ProductSummary:
    return ProductSummary.model_validate({k: item[k] for k in PRODUCT_SUMMARY_ATTRIBUTES})


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
