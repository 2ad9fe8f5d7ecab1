"""``python -m bench.capacity``: capacity and monthly cost per table and per index, from measured rows.

It reads three things, so a re-run after a change picks the change up:

- the consumed capacity per request that ``make bench`` measured on DynamoDB Local (the round-trips
  tables of docs/benchmarks.md, split by table and index, and the item sizes under them);
- the tables and their global secondary indexes as template.yaml declares them;
- the assumed load below (``LOADS``): operations per day of a shop of ``DAILY_USERS`` daily users.

and prints the Markdown of the "Capacity and cost (measured)" section of docs/data-model.md; ``--write``
puts it there, between the markers. Nothing here is measured: it multiplies.
"""

import argparse
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.markdown import table
from local.cfn import ROOT, table_definitions
from shopfeed.commerce import keys

REPORT = ROOT / "docs" / "benchmarks.md"
DATA_MODEL = ROOT / "docs" / "data-model.md"
BEGIN = "<!-- capacity: written by python -m bench.capacity -->"
END = "<!-- capacity: end -->"

SECONDS_PER_DAY = 86_400
HOURS_PER_MONTH = 730  # AWS prices a month at 730 hours


@dataclass(frozen=True)
class Prices:
    """DynamoDB list prices in us-east-1, Standard table class (on-demand as cut on 2024-11-01)."""

    per_million_writes: float = 0.625  # on-demand, $ per million write request units
    per_million_reads: float = 0.125  # on-demand, $ per million read request units
    wcu_hour: float = 0.00065  # provisioned, $ per WCU-hour
    rcu_hour: float = 0.00013  # provisioned, $ per RCU-hour
    as_of: str = (
        "us-east-1 list prices, Standard table class, in force since the on-demand cut of 2024-11-01 (read on "
        "2026-11-27 from stored copies of the pricing pages; check https://aws.amazon.com/dynamodb/pricing/)"
    )


PRICES = Prices()
TARGET_UTILISATION = 0.70  # provisioned with auto-scaling: the target tracking policy's target
MINIMUM_PROVISIONED = 1.0  # auto-scaling's minimum per table and per index, for reads and for writes
TOP = 8  # operations listed under "where the on-demand money goes"

# --- the assumed load: a named shop size, not a measurement -------------------------------------------

DAILY_USERS = 100_000
ORDERS_PER_DAY = DAILY_USERS * 0.05  # one daily user in twenty orders
POSTS_PER_DAY = DAILY_USERS * 0.2
FOLLOWERS_PER_AUTHOR = 200  # the average audience a post is fanned out to
LINES_PER_ORDER = 2
THROUGH_CART = 0.5  # orders checked out from a cart; the others placed directly
PRODUCTS = 10_000
PEAK = 4.0  # the busiest hour against the day's average, for what users drive
SCHEDULED_PEAK = 1.0  # schedules and ops consoles run at their own pace
SNAPSHOT_ITEMS_PER_SECOND = 500  # the snapshot job's write rate (docs/data-model.md, hot partitions)


@dataclass(frozen=True)
class Use:
    """One measured row (``route``, ``case`` as docs/benchmarks.md spells them), ``times`` per operation."""

    route: str
    case: str
    times: float = 1.0


@dataclass(frozen=True)
class Load:
    pattern: str
    what: str
    per_day: float
    uses: tuple[Use, ...] = ()
    peak: float = PEAK
    computed: str = ""  # the name of a computed cost (``computed_costs``) where no row measures it
    note: str = ""

    @property
    def per_second(self) -> float:
        return self.per_day / SECONDS_PER_DAY


def _per_user(times: float) -> float:
    return DAILY_USERS * times


OPS_CONSOLES = 10  # ops screens open all day, each refreshing once a minute


def _console(pattern: str, what: str, use: Use) -> Load:
    """An ops list refreshed once a minute by each console, all day: a steady rate, no peak."""
    return Load(
        pattern, f"{what} (ops: {OPS_CONSOLES} consoles, one a minute)", OPS_CONSOLES * 24 * 60, (use,), SCHEDULED_PEAK
    )


def _and_its_records(what: str, per_day: float, use: Use, records: str) -> Load:
    """A feed write with the feed stream consumer's work on its records (the ``records`` row)."""
    return Load("–", f"{what}, and its stream records", per_day, (use, Use("FeedStreamFunction", records)))


LOADS: tuple[Load, ...] = (
    # Commerce reads
    Load("ECOM-001", "get a customer (with FEED-001)", _per_user(2), (Use("GET /users/{user_id}", "myself"),)),
    Load("catalog", "a product page", _per_user(20), (Use("GET /products/{product_id}", "one product"),)),
    Load("catalog", "a category page", _per_user(5), (Use("GET /products", "category page"),)),
    Load("ECOM-002", "my orders, first page", _per_user(0.2), (Use("GET /users/me/orders", "first page"),)),
    Load("ECOM-003", "an order with its lines", _per_user(0.3), (Use("GET /orders/{order_id}", "5 lines"),)),
    Load("ECOM-004", "an order's lines", _per_user(0.05), (Use("GET /orders/{order_id}/lines", "5 lines"),)),
    _console("ECOM-005", "orders by status", Use("GET /orders", "status Placed, this month: one Query per shard")),
    Load("ECOM-006", "an order's payments", _per_user(0.05), (Use("GET /orders/{order_id}/payments", "one attempt"),)),
    _console("ECOM-007", "pending payments", Use("GET /payments", "status Pending: one Query per shard")),
    Load("ECOM-008", "an order's shipments", _per_user(0.1), (Use("GET /orders/{order_id}/shipments", "one parcel"),)),
    _console("ECOM-010", "shipments by status and carrier", Use("GET /shipments", "Shipped by dhl, this month")),
    Load(
        "reviews",
        "a product's reviews, newest or best first",
        _per_user(3),
        (
            Use("GET /products/{product_id}/reviews", "newest first, first page", 0.5),
            Use("GET /products/{product_id}/reviews", "best first, first page", 0.5),
        ),
    ),
    Load("reviews", "a user's reviews", _per_user(0.05), (Use("GET /users/{user_id}/reviews", "a user's reviews"),)),
    # Commerce writes
    Load("–", "register (`POST /users`)", _per_user(0.01), (Use("POST /users", "register: profile + email guard"),)),
    Load("–", "update my profile", _per_user(0.01), (Use("PATCH /users/me", "If-Match current"),)),
    Load(
        "ECOM-009",
        f"place an order directly ({LINES_PER_ORDER} lines: the 1- and 5-line rows interpolated)",
        ORDERS_PER_DAY * (1 - THROUGH_CART),
        (Use("POST /orders", "1 line", 3 / 4), Use("POST /orders", "5 lines", 1 / 4)),
    ),
    Load("CART", "my cart", _per_user(1), (Use("GET /users/me/cart", "3 lines"),)),
    Load(
        "CART",
        "put a line in my cart (3 an order through the cart)",
        ORDERS_PER_DAY * THROUGH_CART * 3,
        (Use("PUT /users/me/cart/items/{product_id}", "a 4th line"),),
    ),
    Load(
        "CART",
        "take a line out of my cart",
        ORDERS_PER_DAY * THROUGH_CART * 0.5,
        (Use("DELETE /users/me/cart/items/{product_id}", "one of 4 lines"),),
    ),
    Load(
        "ECOM-009",
        "check out my cart (the order in the same transaction)",
        ORDERS_PER_DAY * THROUGH_CART,
        (Use("POST /users/me/cart/checkout", "3 lines"),),
    ),
    Load(
        "–",
        "start a payment",
        ORDERS_PER_DAY,
        (Use("POST /orders/{order_id}/payments", "5 lines: read + transaction"),),
    ),
    Load(
        "worker",
        "settle a payment (payment worker)",
        ORDERS_PER_DAY,
        (Use("PaymentWorkerFunction", "settle one attempt (5 lines): sandbox approves"),),
    ),
    Load("–", "create a shipment", ORDERS_PER_DAY, (Use("POST /orders/{order_id}/shipments", "read + transaction"),)),
    Load(
        "–",
        "move a shipment (Shipped, then Delivered)",
        2 * ORDERS_PER_DAY,
        (Use("PATCH /orders/{order_id}/shipments/{shipment_id}", "Shipped: the order moves too"),),
    ),
    Load(
        "HISTORY",
        "an order's status history",
        _per_user(0.05),
        (Use("GET /orders/{order_id}/history", "placed, paid, shipped"),),
    ),
    Load(
        "worker",
        "settle a refund (payment worker; paid cancellations)",
        ORDERS_PER_DAY * 0.02,
        (Use("PaymentWorkerFunction", "settle one refund: sandbox refunds, order Refunded"),),
    ),
    Load(
        "job",
        f"the payment-window sweep (every minute, {keys.UNPAID_ORDER_SHARDS} shards)",
        24 * 60,
        (Use("OrderExpiryFunction", "a sweep, nothing due"),),
        SCHEDULED_PEAK,
        note="DynamoDB Local reports 0 for a Query that finds nothing; DynamoDB bills 0.5 RCU each "
        f"({keys.UNPAID_ORDER_SHARDS * 0.5:g} RCU a sweep)",
    ),
    Load(
        "–", "cancel an order before paying", ORDERS_PER_DAY * 0.03, (Use("POST /orders/{order_id}/cancel", "5 lines"),)
    ),
    Load(
        "–",
        "cancel a paid order (restock, refund started)",
        ORDERS_PER_DAY * 0.02,
        (Use("POST /orders/{order_id}/cancel", "Paid, 1 line: restock + refund started"),),
    ),
    Load(
        "–",
        "review a product (one order in five)",
        ORDERS_PER_DAY * 0.2,
        (Use("POST /products/{product_id}/reviews", "a buyer's review: purchase checked"),),
    ),
    Load(
        "–", "catalog changes (ops)", PRODUCTS * 0.05, (Use("PATCH /products/{product_id}", "rename"),), SCHEDULED_PEAK
    ),
    # Feed reads
    Load(
        "FEED-003",
        "my home feed, first page",
        _per_user(10),
        (Use("GET /feed", "first page, one celebrity followed"),),
    ),
    Load("FEED-003", "my home feed, next page", _per_user(5), (Use("GET /feed", "next page"),)),
    Load("FEED-004", "a post with its counters", _per_user(10), (Use("GET /posts/{post_id}", "with counters"),)),
    Load("FEED-002", "a user's posts", _per_user(3), (Use("GET /users/{user_id}/posts", "first page"),)),
    Load("FEED-005", "a post's likes", _per_user(1), (Use("GET /posts/{post_id}/likes", "first page"),)),
    Load("FEED-006", "a post's comments", _per_user(3), (Use("GET /posts/{post_id}/comments", "first page"),)),
    Load("FEED-007", "posts by tag", _per_user(1), (Use("GET /tags/{tag}/posts", "one Query per tag shard"),)),
    Load("FEED-008", "a user's followers", _per_user(0.5), (Use("GET /users/{user_id}/followers", "first page"),)),
    Load("follows", "who a user follows", _per_user(0.5), (Use("GET /users/{user_id}/following", "first page"),)),
    Load("FEED-009", "my unread notifications", _per_user(5), (Use("GET /notifications", "unread, first page"),)),
    Load("FEED-009", "all my notifications", _per_user(1), (Use("GET /notifications", "all, first page"),)),
    _console(
        "FEED-010",
        "top authors of the month",
        Use("GET /leaderboards/authors", "this month: one Query per write shard"),
    ),
    # Feed writes and their stream and fanout work
    Load(
        "–",
        f"write a post, its stream records, its fanout to {FOLLOWERS_PER_AUTHOR} followers",
        POSTS_PER_DAY,
        (
            Use("POST /posts", "new post, fanned out"),
            Use("FeedStreamFunction", "the new post's records: post, tag item, idempotency record"),
            Use(
                "FanoutWorkerFunction", "the new post to its author's 21 followers: one page", FOLLOWERS_PER_AUTHOR / 21
            ),
        ),
        note="fanout scaled from the measured page of 21 followers",
    ),
    _and_its_records(
        "like a post",
        _per_user(5),
        Use("PUT /posts/{post_id}/likes/me", "like"),
        "a like's record: counter, notification (the post's hour already notified)",
    ),
    _and_its_records(
        "unlike", _per_user(0.5), Use("DELETE /posts/{post_id}/likes/me", "unlike"), "an unlike's record: counter"
    ),
    _and_its_records(
        "comment",
        _per_user(0.5),
        Use("POST /posts/{post_id}/comments", "comment"),
        "a comment's record: counter, notification",
    ),
    Load(
        "–",
        "follow, its stream records, the backfill of the author's newest posts into my feed",
        _per_user(0.2),
        (
            Use("PUT /users/{user_id}/followers/me", "follow"),
            Use("FeedStreamFunction", "a follow's record: counters, notification, leaderboard"),
            Use("fanout worker: a follow's task", "backfill of the author's newest 20 of 61 posts"),
        ),
    ),
    Load(
        "–",
        "unfollow, its stream records, the author's posts taken out of my feed",
        _per_user(0.05),
        (
            Use("DELETE /users/{user_id}/followers/me", "unfollow"),
            Use("FeedStreamFunction", "an unfollow's record: counters"),
            Use("fanout worker: an unfollow's task", "cleanup: the author's 61 posts of the window deleted by key"),
        ),
    ),
    Load("–", "mark a notification read", _per_user(1), (Use("POST /notifications/{notification_id}/read", "one"),)),
    Load("–", "mark all read", _per_user(0.2), (Use("POST /notifications/read", "all the others"),)),
    Load(
        "–",
        f"delete a post, its entries removed from {FOLLOWERS_PER_AUTHOR} feeds",
        POSTS_PER_DAY * 0.02,
        (
            Use("DELETE /posts/{post_id}", "by its author (feed entries leave through the stream)"),
            Use("FeedStreamFunction", "the deleted post's records: fanout task queued"),
            Use("FanoutWorkerFunction", "the deleted post's entries removed from 21 feeds", FOLLOWERS_PER_AUTHOR / 21),
        ),
    ),
    # Asynchronous commerce work no row measures: computed from the measured item sizes
    Load(
        "outbox",
        "relay a commerce event (stream consumer; ~6 events an order)",
        ORDERS_PER_DAY * 6,
        computed="relay",
        note="order placed, payment authorised, shipment created and moved twice, one review in five",
    ),
    Load(
        "outbox",
        f"sweep the outbox (every minute, {keys.OUTBOX_SHARDS} shards)",
        24 * 60,
        computed="sweep",
        peak=SCHEDULED_PEAK,
    ),
    Load("ECOM-011", "archive an order (hourly job)", ORDERS_PER_DAY, computed="archive", peak=SCHEDULED_PEAK),
    Load(
        "snapshot",
        f"snapshot a product's stock (daily, {PRODUCTS:,} products)",
        PRODUCTS,
        computed="snapshot",
        peak=SNAPSHOT_ITEMS_PER_SECOND * SECONDS_PER_DAY / PRODUCTS,
        note=f"peak: the run writes {SNAPSHOT_ITEMS_PER_SECOND} items a second",
    ),
    Load("reviews", "count a review's rating (stream consumer)", ORDERS_PER_DAY * 0.2, computed="rating"),
    Load("search", "search sync (stream consumers queue, worker writes OpenSearch)", 0, computed="none"),
)


# --- measured rows ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cost:
    """Capacity units of one operation: reads and writes, each per table and per index."""

    reads: Mapping[str, float] = field(default_factory=dict)
    writes: Mapping[str, float] = field(default_factory=dict)

    @property
    def rcu(self) -> float:
        return sum(self.reads.values())

    @property
    def wcu(self) -> float:
        return sum(self.writes.values())

    def scaled(self, times: float) -> "Cost":
        return Cost({k: v * times for k, v in self.reads.items()}, {k: v * times for k, v in self.writes.items()})

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(_add(self.reads, other.reads), _add(self.writes, other.writes))


def _add(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, float]:
    return {k: a.get(k, 0.0) + b.get(k, 0.0) for k in dict.fromkeys([*a, *b])}


def _shares(cell: str) -> Cost:
    """``read: CommerceTable 1; write: CommerceTable 6, OrdersByUser 2`` as a Cost."""
    found: dict[str, dict[str, float]] = {"read": {}, "write": {}}
    for part in filter(None, (p.strip() for p in cell.split(";"))):
        if part == "–":
            continue
        kind, _, named = part.partition(": ")
        for entry in named.split(", "):
            name, _, units = entry.rpartition(" ")
            found[kind][name] = found[kind].get(name, 0.0) + float(units)
    return Cost(found["read"], found["write"])


@dataclass(frozen=True)
class Measured:
    rows: Mapping[tuple[str, str], Cost]  # (route, case) -> what one request consumed
    sizes: Mapping[str, int]  # entity type -> median bytes


def parse_report(text: str) -> Measured:
    """The round-trips rows (those that reported capacity) and the item sizes of a benchmarks report."""
    rows: dict[tuple[str, str], Cost] = {}
    sizes: dict[str, int] = {}
    header: list[str] = []
    for line in text.splitlines():
        if not line.startswith("| "):
            header = []
            continue
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if not header:
            header = cells
            continue
        if set(line) <= set("|-: "):
            continue
        row = dict(zip(header, cells, strict=False))
        if "by table and index" in row and row["WCU"] != "–":
            rows[(row["route"].strip("`"), row["case"])] = _shares(row["by table and index"])
        elif "median bytes" in row:
            sizes[row["entity type"].strip("`")] = int(row["median bytes"])
    return Measured(rows, sizes)


# --- costs no row measures, from the measured item sizes ----------------------------------------------


def _write_units(size: int, transactional: bool = False) -> float:
    return (2 if transactional else 1) * max(1, math.ceil(size / 1024))


def _read_units(size: int, strong: bool = True) -> float:
    return (1 if strong else 0.5) * max(1, math.ceil(size / 4096))


def computed_costs(sizes: Mapping[str, int]) -> dict[str, tuple[Cost, str]]:
    """What the asynchronous commerce work costs per operation, with how it was computed."""
    event = sizes.get("OutboxEvent", 1024)
    header = sizes.get("Order", 512)
    line = sizes.get("OrderLine", 256)
    product = sizes.get("Product", 512)
    order = header + LINES_PER_ORDER * line + sizes.get("PaymentAttempt", 512) + sizes.get("Shipment", 512)
    archived = Cost(
        {"CommerceTable": _read_units(order), "OrdersByAge": 0.5 / 100},
        {
            "CommerceTable": _write_units(header) + LINES_PER_ORDER + 2 + 4 / 100,
            "OrdersByUser": 1,
            "OrdersByStatus": 1,
            "OrdersByAge": 1,
            "ShipmentsByOrder": 1,
            "ShipmentsByStatus": 1,
        },
    )
    return {
        "relay": (
            Cost(
                {"CommerceTable": _read_units(event)},
                {"CommerceTable": _write_units(event, True), "UnpublishedOutbox": 1},
            ),
            f"BatchGetItem of the event (strong) and its transactional UpdateItem ({event} B event, 2 WCU per KB) "
            "plus the removal of its `UnpublishedOutbox` entry (1 WCU)",
        ),
        "sweep": (
            Cost({"UnpublishedOutbox": keys.OUTBOX_SHARDS * 0.5}),
            "one Query per shard of a sparse index that holds only stuck events: 0.5 RCU each",
        ),
        "archive": (
            archived,
            f"Query of the order's partition (strong; header {header} B, {LINES_PER_ORDER} lines of {line} B, a "
            "payment attempt and a shipment), the header's conditional delete with its three index entries, "
            "the other items' deletes (1 WCU each) with the shipment's two index entries; the batch's manifest "
            "writes and index page shared by 100 orders",
        ),
        "snapshot": (
            Cost({"CommerceTable": _read_units(product), "Catalog": 0.5 / 100}, {"CommerceTable": 1}),
            f"per product: its share of a `Catalog` page, a strong read of the product ({product} B) in a "
            "BatchGetItem, a snapshot item written with BatchWriteItem (< 1 KB)",
        ),
        "rating": (
            Cost({"CommerceTable": 1}, {"CommerceTable": _write_units(product, True) + 2}),
            f"the product's counters (transactional ADD, {product} B), the strong read of its applied set and "
            "the set's update (transactional, < 1 KB); one read and one counter write per product per batch, "
            "so an over-estimate",
        ),
        "none": (
            Cost(),
            "no DynamoDB request: stream records are free to a Lambda consumer, the writes go to SQS and OpenSearch",
        ),
    }


# --- the tables ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Capacity:
    """Each load with its cost per operation, and the totals per table and per index."""

    loads: list[tuple[Load, Cost, str]]  # the load, its cost per operation, where the cost comes from
    indexes: Mapping[str, list[tuple[str, str]]]  # table -> (index, projection) as template.yaml declares

    def per_second(self, peak: bool = False) -> Cost:
        """Consumed units per second by table and index: average, or each load at its peak."""
        total = Cost()
        for load, cost, _ in self.loads:
            total = total + cost.scaled(load.per_second * (load.peak if peak else 1.0))
        return total

    def names(self) -> list[tuple[str, str]]:
        """(table, table or index) in template order."""
        return [(t, name) for t, indexes in self.indexes.items() for name in [t, *(i for i, _ in indexes)]]


def template_indexes(definitions: Mapping[str, Mapping[str, object]] | None = None) -> dict[str, list[tuple[str, str]]]:
    """Per table of the template, its GSIs with their projection type, in declaration order."""
    found = {}
    for name, definition in (definitions or table_definitions()).items():
        declared = definition.get("GlobalSecondaryIndexes") or []
        assert isinstance(declared, list)
        found[name] = [(index["IndexName"], index["Projection"]["ProjectionType"]) for index in declared]
    return found


def assemble(measured: Measured, loads: Iterable[Load], indexes: Mapping[str, list[tuple[str, str]]]) -> Capacity:
    computed = computed_costs(measured.sizes)
    assembled = []
    for load in loads:
        if load.computed:
            cost, source = computed[load.computed]
        else:
            cost, sources = Cost(), []
            for use in load.uses:
                found = measured.rows.get((use.route, use.case))
                if found is None:
                    raise KeyError(f"no measured row `{use.route}` ({use.case}) in docs/benchmarks.md")
                cost = cost + found.scaled(use.times)
                times = "" if use.times == 1 else f" × {use.times:.3g}"
                sources.append(f"`{use.route}` ({use.case}){times}")
            source = " + ".join(sources)
        assembled.append((load, cost, source))
    return Capacity(assembled, indexes)


def on_demand(reads_per_s: float, writes_per_s: float, prices: Prices = PRICES) -> tuple[float, float]:
    """Monthly dollars of on-demand reads and writes at these average units per second."""
    seconds = HOURS_PER_MONTH * 3600
    return (
        reads_per_s * seconds / 1e6 * prices.per_million_reads,
        writes_per_s * seconds / 1e6 * prices.per_million_writes,
    )


def provisioned(units_per_s: float, unit_hour: float) -> tuple[float, float]:
    """Capacity auto-scaling keeps at the target utilisation (at least the minimum) and its monthly dollars.

    The average load over the target is what target tracking settles on when the load moves slowly; it
    follows a daily curve with a lag, so the real bill sits a little above this.
    """
    units = max(MINIMUM_PROVISIONED, units_per_s / TARGET_UTILISATION)
    return units, units * HOURS_PER_MONTH * unit_hour


def _n(value: float) -> str:
    return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def _dollars(value: float) -> str:
    return f"${value:,.2f}"


def markdown(capacity: Capacity, prices: Prices = PRICES) -> str:
    load_rows = [
        [
            load.pattern,
            load.what,
            f"{load.per_day:,.0f}",
            f"{load.per_second:.3g}",
            f"{load.per_second * load.peak:.3g}",
            _n(cost.rcu),
            _n(cost.wcu),
            source + (f"; {load.note}" if load.note else ""),
        ]
        for load, cost, source in capacity.loads
    ]
    average, peak = capacity.per_second(), capacity.per_second(peak=True)
    money_rows, totals = [], [0.0, 0.0, 0.0]
    for table_name, name in capacity.names():
        rcu, wcu = average.reads.get(name, 0.0), average.writes.get(name, 0.0)
        read_cost, write_cost = on_demand(rcu, wcu, prices)
        rcu_p, rcu_cost = provisioned(rcu, prices.rcu_hour)
        wcu_p, wcu_cost = provisioned(wcu, prices.wcu_hour)
        totals[0] += read_cost + write_cost
        totals[1] += rcu_cost + wcu_cost
        money_rows.append(
            [
                f"**{name}**" if name == table_name else f"{table_name} / `{name}`",
                _n(rcu),
                _n(wcu),
                _n(peak.reads.get(name, 0.0)),
                _n(peak.writes.get(name, 0.0)),
                _dollars(read_cost),
                _dollars(write_cost),
                _dollars(read_cost + write_cost),
                f"{rcu_p:,.0f} / {wcu_p:,.0f}",
                _dollars(rcu_cost + wcu_cost),
            ]
        )
    money_rows.append(
        ["**all**", "", "", "", "", "", "", f"**{_dollars(totals[0])}**", "", f"**{_dollars(totals[1])}**"]
    )
    unknown = sorted((set(average.reads) | set(average.writes)) - {n for _, n in capacity.names()})
    spent = sorted(
        (
            (sum(on_demand(cost.rcu * load.per_second, cost.wcu * load.per_second, prices)), load)
            for load, cost, _ in capacity.loads
        ),
        key=lambda pair: pair[0],
        reverse=True,
    )
    top_rows = [
        [load.pattern, load.what, _dollars(dollars), f"{dollars / totals[0]:.0%}" if totals[0] else "–"]
        for dollars, load in spent[:TOP]
    ]
    index_rows = []
    for table_name, indexes in capacity.indexes.items():
        table_writes = average.writes.get(table_name, 0.0)
        for name, projection in indexes:
            writes = average.writes.get(name, 0.0)
            writers = sorted(
                (
                    (cost.writes.get(name, 0.0) * load.per_second, load.what, cost.writes.get(name, 0.0))
                    for load, cost, _ in capacity.loads
                    if cost.writes.get(name)
                ),
                reverse=True,
            )
            index_rows.append(
                [
                    f"{table_name} / `{name}`",
                    projection,
                    _n(writes),
                    f"{writes / table_writes:.1%}" if table_writes else "–",
                    _dollars(on_demand(0, writes, prices)[1]),
                    "; ".join(f"{what} {units:g}" for _, what, units in writers[:3]) or "–",
                ]
            )
    parts = [
        BEGIN,
        f"Generated by `python -m bench.capacity --write` from the round-trips rows of `docs/benchmarks.md` "
        f"(`make bench`, or `python -m bench --only round-trips`), the indexes of `template.yaml` and the "
        f"assumed load in `bench/capacity.py`. Prices: {prices.as_of}: on-demand ${prices.per_million_reads} "
        f"per million read request units, ${prices.per_million_writes} per million write request units; "
        f"provisioned ${prices.rcu_hour} per RCU-hour, ${prices.wcu_hour} per WCU-hour; a month is "
        f"{HOURS_PER_MONTH} hours. Storage, streams, PITR and backups are not in these tables.",
        "",
        f"**Assumed load** (an assumption, not a measurement): a shop of {DAILY_USERS:,} daily users, "
        f"{ORDERS_PER_DAY:,.0f} orders a day of {LINES_PER_ORDER} lines, {POSTS_PER_DAY:,.0f} posts a day to "
        f"{FOLLOWERS_PER_AUTHOR} followers each, {PRODUCTS:,} products. Peak is the busiest hour at {PEAK:g}× "
        "the day's average for what users drive, 1× for schedules and ops consoles. Costs per operation are "
        "the measured rows named (RCU and WCU with the indexes' share), multiplied as stated.",
        "",
        table(
            ["pattern", "operation", "per day", "avg /s", "peak /s", "RCU / op", "WCU / op", "from (bench row)"],
            load_rows,
            "llrrrrrl",
        ),
        "",
        f"**Monthly capacity and cost per table and per index.** Units are consumed units per second (average "
        f"and at peak); on-demand bills the average; provisioned is auto-scaling's target tracking at "
        f"{TARGET_UTILISATION:.0%} utilisation of the average (at least {MINIMUM_PROVISIONED:g} RCU and 1 WCU "
        "per table and per index), the steady-state alternative once the traffic is known.",
        "",
        table(
            [
                "table / index",
                "RCU/s avg",
                "WCU/s avg",
                "RCU/s peak",
                "WCU/s peak",
                "on-demand reads",
                "on-demand writes",
                "on-demand / month",
                "provisioned RCU / WCU",
                "provisioned / month",
            ],
            money_rows,
            "lrrrrrrrrr",
        ),
    ]
    parts += [
        "",
        f"**Where the on-demand money goes**: the {TOP} operations that cost most a month, of the total above.",
        "",
        table(["pattern", "operation", "on-demand / month", "of the total"], top_rows, "llrr"),
    ]
    if unknown:
        parts += ["", "Consumed by names the template does not declare (renamed or removed?): " + ", ".join(unknown)]
    parts += [
        "",
        "**What each index costs in writes.** Every write of an item projected into an index writes the index "
        "too (1 WCU per KB of the projected item; a change of its key is a delete and a put, 2). Share: of "
        "the table's own write units.",
        "",
        table(
            [
                "index",
                "projection",
                "WCU/s avg",
                "÷ table writes",
                "on-demand writes / month",
                "largest writers (WCU per op)",
            ],
            index_rows,
            "llrrrl",
        ),
        END,
    ]
    return "\n".join(parts)


def write_into(document: Path, section: str) -> None:
    """Put ``section`` in place of the one between the markers in ``document``."""
    text = document.read_text()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"{document} has no markers `{BEGIN}` … `{END}` to write between")
    document.write_text(pattern.sub(lambda _: section, text, count=1))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.capacity", description=__doc__)
    parser.add_argument("--report", type=Path, default=REPORT, help="the benchmarks report to read")
    parser.add_argument("--write", action="store_true", help=f"write the section into {DATA_MODEL.name}")
    args = parser.parse_args()
    section = markdown(assemble(parse_report(args.report.read_text()), LOADS, template_indexes()))
    if args.write:
        write_into(DATA_MODEL, section)
    print(section)


if __name__ == "__main__":
    main()
