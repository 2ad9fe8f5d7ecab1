"""Every key format of CommerceTable, in one place. No other module spells a prefix.

Base table (PK / SK):
    USER#<user_id>          PROFILE                 customer profile (user ids escaped: platform.key_parts)
    USER#<user_id>          PURCHASE#<product_id>   the user paid for the product (paid_orders: how many orders)
    USER#<user_id>          CART                    the user's cart: its version (ETag) and expiry (TTL)
    USER#<user_id>          CART#<product_id>       a line of the cart (sorts after CART: one Query reads both)
    EMAIL#<email>           GUARD                   unique-email guard (points at the user)
    PRODUCT#<product_id>    META                    product and price
    PRODUCT#<product_id>    STOCK                   the product's stock layout: warehouse → bucket count, price, version
    STOCK#<product_id>#<warehouse>#<n>  STOCK       one stock bucket: its units (each bucket its own partition)
    ORDER#<order_id>        META                    order header
    ORDER#<order_id>        HISTORY#000001 ..       status history: one per move, by the order's version after it
                                                    (sorts before LINE#: never in the header-and-lines read)
    ORDER#<order_id>        LINE#0001 ..            order lines (sort before META: one Query gets both)
    ORDER#<order_id>        PAYMENT#<attempt_id>    payment attempts (ULIDs: newest last, read descending)
    ORDER#<order_id>        SHIPMENT#<shipment_id>  shipments of the order
    OUTBOX#<event_id>       EVENT                   integration event waiting to be relayed
    PRODUCT#<product_id>    REVIEW#<user_id>        a review (one per user per product: its natural key)
    APPLIED#<target>        <epoch second>          applied set: records of that second counted on <target> (48 h)
    SANDBOX#<key>           CHARGE                  the sandbox payment provider's ledger (one per idempotency key)
    SANDBOX#<key>           REFUND                  the same for refunds (the refund id is the key)
    ARCHIVE                 BATCH#<batch_id>        archive manifest: an S3 batch of orders in flight (ECOM-011)
    ARCHIVE                 LEASE                   the archive run holding the job (runs never overlap)
    SNAPSHOT#<yyyy-mm-dd>   <product_id>            a product's stock level on that day (TTL)
    NOTICE#<event_id>       EMAIL                   the customer email of an integration event: claimed, sent (TTL)

Indexes (attribute names say which index they feed):
    ProductsByCategory  by_category_pk = CATEGORY#<category>            by_category_sk = <product_id>
    OrdersByUser        by_user_pk     = USER#<user_id>                 by_user_sk     = <placed_at>#<order_id>
    OrdersByStatus      by_status_pk   = STATUS#<status>#<yyyy-mm>#<n>  by_status_sk   = <placed_at>#<order_id>
    UnpublishedOutbox   unpublished_pk = OUTBOX#<n>                     unpublished_sk = <occurred_at>#<event_id>
    RecentReviewsByProduct  product_reviews_pk = PRODUCT#<product_id>  recent_reviews_sk = <created_at>#<user_id>
    TopReviewsByProduct     product_reviews_pk = PRODUCT#<product_id>  top_reviews_sk = <rating>#<created_at>#<user_id>
    ReviewsByUser           user_reviews_pk    = USER#<user_id>        user_reviews_sk = <created_at>#<product_id>
    PendingPayments     pending_pk     = PENDING#<n>                    pending_sk     = <created_at>#<attempt_id>
    ShipmentsByOrder    shipments_pk   = ORDER#<order_id>               shipments_sk   = <updated_at>#<shipment_id>
    ShipmentsByStatus   shipping_pk    = SHIPPING#<status>#<carrier>#<yyyy-mm>
                        shipping_sk    = <updated_at>#<shipment_id>
    OrdersByAge         by_age_pk      = AGE#<n>                        by_age_sk      = <placed_at>#<order_id>
    UnpaidOrders        unpaid_pk      = UNPAID#<n>                     unpaid_sk      = <placed_at>#<order_id>
                        (sparse: an order is listed while it is Placed, for the payment-window sweeper)
    Catalog             catalog_pk     = CATALOG                        catalog_sk     = <product_id>
"""

from collections.abc import Mapping
from typing import Any, Final

from shopfeed.commerce.models import OrderStatus, ReviewSummary
from shopfeed.platform import key_parts
from shopfeed.platform.dynamo import IndexSpec
from shopfeed.platform.key_parts import index_key, newest_first

USER: Final = "USER#"
PROFILE: Final = "PROFILE"
PURCHASE: Final = "PURCHASE#"
EMAIL: Final = "EMAIL#"
GUARD: Final = "GUARD"
PRODUCT: Final = "PRODUCT#"
META: Final = "META"
CATEGORY: Final = "CATEGORY#"
ORDER: Final = "ORDER#"
LINE: Final = "LINE#"
HISTORY: Final = "HISTORY#"
STATUS: Final = "STATUS#"
OUTBOX: Final = "OUTBOX#"
EVENT: Final = "EVENT"
NOTICE: Final = "NOTICE#"
EMAIL_NOTICE: Final = "EMAIL"

# Write sharding of hot index partitions: constants of the data model, not configuration. 16 takes
# 5,000 orders/s at ~625 index writes/s a shard (decision 228). A count only ever grows to a multiple
# of the old one and readers query every shard, so items written under 4 (shards 0-3) are still read.
ORDER_STATUS_SHARDS: Final = 16
OUTBOX_SHARDS: Final = 16

# The indexes, with the only spelling of their attribute names, what they hold, how an item's keys are
# made and what they project (template.yaml declares the same; a template test compares). Items take
# their index keys from these declarations (platform.dynamo.indexed / reindexed), never by hand.
# What the lists read of each (exactly what the index projects):
ORDER_SUMMARY_ATTRIBUTES: Final = ("order_id", "user_id", "status", "placed_at", "updated_at", "total", "line_count")
PRODUCT_SUMMARY_ATTRIBUTES: Final = ("product_id", "name", "category", "price")
OUTBOX_ATTRIBUTES: Final = ("event_id", "event_type", "source", "aggregate_id", "occurred_at", "detail")
REVIEW_SUMMARY_ATTRIBUTES: Final = tuple(ReviewSummary.model_fields)
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

PRODUCTS_BY_CATEGORY: Final = IndexSpec(
    "ProductsByCategory",
    "by_category_pk",
    "by_category_sk",
    holds=("Product",),
    reads=("category", "product_id"),
    keys_of=lambda p: product_by_category(p["category"], p["product_id"]),
    projection=PRODUCT_SUMMARY_ATTRIBUTES,
)
ORDERS_BY_USER: Final = IndexSpec(
    "OrdersByUser",
    "by_user_pk",
    "by_user_sk",
    holds=("Order",),
    reads=("user_id", "placed_at", "order_id"),
    keys_of=lambda o: order_by_user(o["user_id"], o["placed_at"], o["order_id"]),
    projection=ORDER_SUMMARY_ATTRIBUTES,
)
ORDERS_BY_STATUS: Final = IndexSpec(
    "OrdersByStatus",
    "by_status_pk",
    "by_status_sk",
    holds=("Order",),
    reads=("status", "placed_at", "order_id"),
    keys_of=lambda o: order_by_status(o["status"], o["placed_at"], o["order_id"]),
    projection=ORDER_SUMMARY_ATTRIBUTES,
)
# Written and removed by the platform's outbox (platform.outbox), whose items are its own.
UNPUBLISHED_OUTBOX: Final = IndexSpec(
    "UnpublishedOutbox", "unpublished_pk", "unpublished_sk", projection=OUTBOX_ATTRIBUTES
)

Key = key_parts.Key


def _user_part(user_id: str) -> str:
    # A user id is a token subject: any printable text, `#` included (see platform.key_parts).
    return USER + key_parts.escape(user_id)


def user(user_id: str) -> Key:
    return {"PK": _user_part(user_id), "SK": PROFILE}


def purchase(user_id: str, product_id: str) -> Key:
    """Proof of purchase: kept by payments (an approved order counts, its cancellation takes it back),
    checked by reviews (only buyers review), in the buyer's partition."""
    return {"PK": _user_part(user_id), "SK": PURCHASE + product_id}


# -- the cart (seed 001, AP 8) --------------------------------------------------------------------
#
# In the user's partition: the header and its lines share the prefix, so one strongly consistent
# Query (begins_with CART) reads the whole cart.

CART: Final = "CART"
CART_LINE: Final = "CART#"


def cart(user_id: str) -> Key:
    return {"PK": _user_part(user_id), "SK": CART}


def cart_line(user_id: str, product_id: str) -> Key:
    return {"PK": _user_part(user_id), "SK": CART_LINE + product_id}


def cart_partition(user_id: str) -> str:
    return _user_part(user_id)


def parse_cart_product(sk: str) -> str:
    return key_parts.after_prefix(sk, CART_LINE, "a cart line")


def email_guard(email: str) -> Key:
    return {"PK": EMAIL + email.lower(), "SK": GUARD}


def email_notice(event_id: str) -> Key:
    """The guard of the customer email an integration event causes: one per event id (its own partition,
    so claims of different events never contend)."""
    return {"PK": NOTICE + event_id, "SK": EMAIL_NOTICE}


def product(product_id: str) -> Key:
    return {"PK": PRODUCT + product_id, "SK": META}


def product_by_category(category: str, product_id: str) -> Key:
    return index_key(PRODUCTS_BY_CATEGORY, CATEGORY + category, product_id)


def category_partition(category: str) -> str:
    return CATEGORY + category


# -- reviews ---------------------------------------------------------------------------------------
#
# A review lives in its product's partition under its natural key (one per user per product), so a
# second review is a failed put-if-absent, not a read. Its three orders are indexes: a product's
# newest first, a product's best first (ties newest first), a user's newest first. Both product
# orders share one partition attribute. In sort keys the user part is escaped: no subject can spell
# another key, and an accepted subject (at most 765 bytes escaped) leaves room under the 1,024-byte limit.

REVIEW: Final = "REVIEW#"
APPLIED: Final = "APPLIED#"

_REVIEW_READS: Final = ("product_id", "user_id", "rating", "created_at")
RECENT_REVIEWS_BY_PRODUCT: Final = IndexSpec(
    "RecentReviewsByProduct",
    "product_reviews_pk",
    "recent_reviews_sk",
    holds=("Review",),
    reads=_REVIEW_READS,
    keys_of=lambda r: _review_order(r, "product_reviews_pk", "recent_reviews_sk"),
    projection=REVIEW_SUMMARY_ATTRIBUTES,
)
TOP_REVIEWS_BY_PRODUCT: Final = IndexSpec(
    "TopReviewsByProduct",
    "product_reviews_pk",
    "top_reviews_sk",
    holds=("Review",),
    reads=_REVIEW_READS,
    keys_of=lambda r: _review_order(r, "product_reviews_pk", "top_reviews_sk"),
    projection=REVIEW_SUMMARY_ATTRIBUTES,
)
REVIEWS_BY_USER: Final = IndexSpec(
    "ReviewsByUser",
    "user_reviews_pk",
    "user_reviews_sk",
    holds=("Review",),
    reads=_REVIEW_READS,
    keys_of=lambda r: _review_order(r, "user_reviews_pk", "user_reviews_sk"),
    projection=REVIEW_SUMMARY_ATTRIBUTES,
)


def review(product_id: str, user_id: str) -> Key:
    return {"PK": PRODUCT + product_id, "SK": REVIEW + key_parts.escape(user_id)}


def review_partition(product_id: str) -> str:
    """The partition of a product's reviews in both product orders (the product's own PK value)."""
    return PRODUCT + product_id


def user_reviews_partition(user_id: str) -> str:
    return _user_part(user_id)


def review_orders(product_id: str, user_id: str, rating: int, created_at: str) -> Key:
    """The index keys a review carries. ``<rating>#`` sorts as text because a rating is one digit
    (1-5); the review's creation time breaks ties, newest first when read descending."""
    newest = f"{created_at}#{key_parts.escape(user_id)}"
    return {
        **index_key(RECENT_REVIEWS_BY_PRODUCT, review_partition(product_id), newest),
        TOP_REVIEWS_BY_PRODUCT.sort_key: f"{rating}#{newest}",
        **index_key(REVIEWS_BY_USER, _user_part(user_id), newest_first(created_at, product_id)),
    }


def _review_order(review: Mapping[str, Any], partition_key: str, sort_key: str) -> Key:
    placed = review_orders(review["product_id"], review["user_id"], int(review["rating"]), review["created_at"])
    return {partition_key: placed[partition_key], sort_key: placed[sort_key]}


def applied_records(target: str, second: int) -> Key:
    """The applied set of ``target`` for the stream records created in ``second`` (platform.exactly_once):
    a partition per target, apart from the counted item's, written once per batch like the item."""
    return {"PK": APPLIED + target, "SK": f"{second:012d}"}


def order(order_id: str) -> Key:
    return {"PK": ORDER + order_id, "SK": META}


def order_partition(order_id: str) -> str:
    return ORDER + order_id


def order_line(order_id: str, line_no: int) -> Key:
    return {"PK": ORDER + order_id, "SK": f"{LINE}{line_no:04d}"}


def order_history(order_id: str, version: int) -> Key:
    """A move of the order, named by the version it left the order at (zero-padded: text order is
    move order). ``H`` sorts before ``L``: ``read_order``'s LINE#..META range never reads history."""
    return {"PK": ORDER + order_id, "SK": f"{HISTORY}{version:06d}"}


def order_by_user(user_id: str, placed_at: str, order_id: str) -> Key:
    return index_key(ORDERS_BY_USER, _user_part(user_id), newest_first(placed_at, order_id))


def user_orders_partition(user_id: str) -> str:
    return _user_part(user_id)


def order_status_shard(order_id: str) -> int:
    return key_parts.shard(order_id, ORDER_STATUS_SHARDS)


def status_partition(status: str, month: str, shard: int) -> str:
    return f"{STATUS}{status}#{month}#{shard}"


def order_by_status(status: str, placed_at: str, order_id: str) -> Key:
    month = placed_at[:7]
    partition = status_partition(status, month, order_status_shard(order_id))
    return index_key(ORDERS_BY_STATUS, partition, newest_first(placed_at, order_id))


def outbox(event_id: str) -> Key:
    return {"PK": OUTBOX + event_id, "SK": EVENT}


def outbox_unpublished(event_id: str, occurred_at: str) -> Key:
    partition = unpublished_partition(key_parts.shard(event_id, OUTBOX_SHARDS))
    return index_key(UNPUBLISHED_OUTBOX, partition, newest_first(occurred_at, event_id))


def unpublished_partition(shard: int) -> str:
    return f"{OUTBOX}{shard}"


def parse_order_id(pk: str) -> str:
    return key_parts.after_prefix(pk, ORDER, "an order")


def parse_event_id(pk: str) -> str:
    return key_parts.after_prefix(pk, OUTBOX, "an outbox")


def parse_line_no(sk: str) -> int:
    return int(key_parts.after_prefix(sk, LINE, "an order line"))


# -- payments and shipments -----------------------------------------------------------------------

PAYMENT: Final = "PAYMENT#"
PENDING: Final = "PENDING#"
SHIPMENT: Final = "SHIPMENT#"
SHIPPING: Final = "SHIPPING#"
SANDBOX: Final = "SANDBOX#"
CHARGE: Final = "CHARGE"
REFUND: Final = "REFUND"

# Every attempt passes through the pending index once (written Pending, removed when settled), as every
# event passes through UnpublishedOutbox: sharded the same way so a payment peak never throttles it.
PENDING_PAYMENT_SHARDS: Final = 4

# Sparse: an attempt is listed while it is Pending only.
PENDING_PAYMENTS: Final = IndexSpec(
    "PendingPayments",
    "pending_pk",
    "pending_sk",
    holds=("PaymentAttempt",),
    reads=("status", "attempt_id", "created_at"),
    keys_of=lambda a: pending_payment(a["attempt_id"], a["created_at"]) if a["status"] == "Pending" else None,
    projection=PAYMENT_ATTRIBUTES,
)
# Both shipment lists sort by ``updated_at``: their keys move with every update.
SHIPMENTS_BY_ORDER: Final = IndexSpec(
    "ShipmentsByOrder",
    "shipments_pk",
    "shipments_sk",
    holds=("Shipment",),
    reads=("order_id", "updated_at", "shipment_id"),
    keys_of=lambda s: shipment_by_order(s["order_id"], s["updated_at"], s["shipment_id"]),
    projection=SHIPMENT_ATTRIBUTES,
)
SHIPMENTS_BY_STATUS: Final = IndexSpec(
    "ShipmentsByStatus",
    "shipping_pk",
    "shipping_sk",
    holds=("Shipment",),
    reads=("status", "carrier", "updated_at", "shipment_id"),
    keys_of=lambda s: shipment_by_status(s["status"], s["carrier"], s["updated_at"], s["shipment_id"]),
    projection=SHIPMENT_ATTRIBUTES,
)


def payment_attempt(order_id: str, attempt_id: str) -> Key:
    return {"PK": ORDER + order_id, "SK": PAYMENT + attempt_id}


def pending_payment(attempt_id: str, created_at: str) -> Key:
    """The PendingPayments keys an attempt carries while it is Pending (oldest first by creation)."""
    partition = pending_partition(key_parts.shard(attempt_id, PENDING_PAYMENT_SHARDS))
    return index_key(PENDING_PAYMENTS, partition, newest_first(created_at, attempt_id))


def pending_partition(shard: int) -> str:
    return f"{PENDING}{shard}"


def shipment(order_id: str, shipment_id: str) -> Key:
    return {"PK": ORDER + order_id, "SK": SHIPMENT + shipment_id}


def shipment_by_order(order_id: str, updated_at: str, shipment_id: str) -> Key:
    return index_key(SHIPMENTS_BY_ORDER, ORDER + order_id, newest_first(updated_at, shipment_id))


def shipment_by_status(status: str, carrier: str, updated_at: str, shipment_id: str) -> Key:
    """The dashboard keys (ECOM-010): the shipment's status, carrier and the month of its last update."""
    partition = shipments_partition(status, carrier, updated_at[:7])
    return index_key(SHIPMENTS_BY_STATUS, partition, newest_first(updated_at, shipment_id))


def shipments_partition(status: str, carrier: str, month: str) -> str:
    return f"{SHIPPING}{status}#{carrier}#{month}"


def sandbox_charge(idempotency_key: str) -> Key:
    return {"PK": SANDBOX + idempotency_key, "SK": CHARGE}


def sandbox_refund(idempotency_key: str) -> Key:
    return {"PK": SANDBOX + idempotency_key, "SK": REFUND}


# -- archive (ECOM-011) and inventory snapshots -------------------------------------------------------

AGE: Final = "AGE#"
CATALOG: Final = "CATALOG"
ARCHIVE: Final = "ARCHIVE"
ARCHIVE_BATCH: Final = "BATCH#"
ARCHIVE_LEASE: Final = "LEASE"
SNAPSHOT: Final = "SNAPSHOT#"

# Every order placed writes one OrdersByAge entry: sharded as the status index is, for the same reason
# (one index partition takes ~1,000 writes/s). A constant of the data model, like the others.
ORDER_AGE_SHARDS: Final = 16

# KEYS_ONLY indexes: the archive finds old orders, the snapshot job lists every product.
# An order's age counts from its placement (a restore restarts it by hand: archive.restore).
ORDERS_BY_AGE: Final = IndexSpec(
    "OrdersByAge",
    "by_age_pk",
    "by_age_sk",
    holds=("Order",),
    reads=("placed_at", "order_id"),
    keys_of=lambda o: order_by_age(o["placed_at"], o["order_id"]),
    projection=(),
)
CATALOG_INDEX: Final = IndexSpec(
    "Catalog",
    "catalog_pk",
    "catalog_sk",
    holds=("Product",),
    reads=("product_id",),
    keys_of=lambda p: product_in_catalog(p["product_id"]),
    projection=(),
)


def order_age_shard(order_id: str) -> int:
    return key_parts.shard(order_id, ORDER_AGE_SHARDS)


def age_partition(shard: int) -> str:
    return f"{AGE}{shard}"


def order_by_age(placed_at: str, order_id: str) -> Key:
    """Written once with the order header; status changes never touch it. An order's age counts from
    its placement, or from its restore when it was brought back from the archive."""
    return index_key(ORDERS_BY_AGE, age_partition(order_age_shard(order_id)), newest_first(placed_at, order_id))


def placed_before(placed_at: str) -> str:
    """The OrdersByAge (and UnpaidOrders) sort-key bound below which every order was placed before ``placed_at``
    (ISO-8601 UTC, which sorts as text in time order)."""
    return placed_at


def placement_of(by_age_sk: str) -> tuple[str, str]:
    """``(placed_at, order_id)`` of an OrdersByAge sort key."""
    placed_at, _, order_id = by_age_sk.rpartition("#")
    if not placed_at or not order_id:
        raise ValueError(f"not an order age key: {by_age_sk}")
    return placed_at, order_id


def product_in_catalog(product_id: str) -> Key:
    return index_key(CATALOG_INDEX, CATALOG, product_id)


def archive_batch(batch_id: str) -> Key:
    return {"PK": ARCHIVE, "SK": ARCHIVE_BATCH + batch_id}


def archive_lease() -> Key:
    return {"PK": ARCHIVE, "SK": ARCHIVE_LEASE}


def snapshot(day: str, product_id: str) -> Key:
    return {"PK": snapshot_partition(day), "SK": product_id}


def snapshot_partition(day: str) -> str:
    return SNAPSHOT + day


# -- stock as items (issue 18, decisions 151-165) -------------------------------------------------
#
# A product's stock is split into buckets, per warehouse; each bucket has its own partition key, so
# orders of one product spread over as many partitions (and transaction locks) as it has buckets:
# buckets under one partition key would share its ~1,000 WCU/s and gain nothing. The layout (which
# buckets exist) sits beside the product's META in its partition.

STOCK: Final = "STOCK#"
STOCK_ITEM: Final = "STOCK"


def stock_layout(product_id: str) -> Key:
    return {"PK": PRODUCT + product_id, "SK": STOCK_ITEM}


def stock_bucket(product_id: str, warehouse: str, bucket: int) -> Key:
    """Product ids and warehouse ids never hold a ``#`` (their types refuse it): the key parses back."""
    return {"PK": f"{STOCK}{product_id}#{warehouse}#{bucket}", "SK": STOCK_ITEM}


def parse_stock_bucket(pk: str) -> tuple[str, str, int]:
    """``(product_id, warehouse, bucket)`` of a stock bucket's partition key."""
    product_id, warehouse, bucket = key_parts.after_prefix(pk, STOCK, "a stock bucket").split("#")
    return product_id, warehouse, int(bucket)


# -- the payment window ------------------------------------------------------------------------------

UNPAID: Final = "UNPAID#"

# Every order placed passes through the unpaid index (written Placed, removed by the move out of it), as
# every order passes through OrdersByAge: sharded the same way, for the same reason.
UNPAID_ORDER_SHARDS: Final = 16

# Sparse and KEYS_ONLY: an order is listed while it is Placed, oldest placement first; every move out of
# Placed (reindexed: it reads ``status``) takes it out. The sweeper reads the order itself, strongly.
UNPAID_ORDERS: Final = IndexSpec(
    "UnpaidOrders",
    "unpaid_pk",
    "unpaid_sk",
    holds=("Order",),
    reads=("status", "placed_at", "order_id"),
    keys_of=lambda o: unpaid_order(o["placed_at"], o["order_id"]) if o["status"] == OrderStatus.PLACED else None,
    projection=(),
)


def unpaid_partition(shard: int) -> str:
    return f"{UNPAID}{shard}"


def unpaid_order(placed_at: str, order_id: str) -> Key:
    partition = unpaid_partition(key_parts.shard(order_id, UNPAID_ORDER_SHARDS))
    return index_key(UNPAID_ORDERS, partition, newest_first(placed_at, order_id))


# Every index of CommerceTable (template.yaml declares exactly these; a template test compares).
INDEXES: Final = (
    PRODUCTS_BY_CATEGORY,
    ORDERS_BY_USER,
    ORDERS_BY_STATUS,
    UNPUBLISHED_OUTBOX,
    RECENT_REVIEWS_BY_PRODUCT,
    TOP_REVIEWS_BY_PRODUCT,
    REVIEWS_BY_USER,
    PENDING_PAYMENTS,
    SHIPMENTS_BY_ORDER,
    SHIPMENTS_BY_STATUS,
    ORDERS_BY_AGE,
    CATALOG_INDEX,
    UNPAID_ORDERS,
)
