"""Stock as items (issue 18): a product's stock per warehouse, split into buckets with their own
partition keys, and the layout that says which buckets exist (data, changed by admins).

Every write keeps units exact: a take is guarded ``available >= units``, a move takes from one bucket
and adds to another in one TransactWriteItems, a resize redistributes with ADD deltas that sum to the
units restocked (zero for a pure resize). Reads of levels are strongly consistent BatchGetItems of the
layout's bucket keys: buckets are separate partitions, so no single Query can read them.
"""

import contextlib
import random
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Final

from boto3.dynamodb.conditions import Attr, ConditionBase

from shopfeed.commerce import items, keys
from shopfeed.commerce.errors import BucketShort
from shopfeed.commerce.models import (
    DEFAULT_WAREHOUSE,
    BucketLevel,
    BucketRef,
    OrderLine,
    Restocked,
    StockLayout,
    StockTake,
)
from shopfeed.commerce.types import MAX_BUCKETS, MAX_STOCK
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.dynamo import Transaction, Update
from shopfeed.platform.errors import Contention, InvalidRequest, NotFound, StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest, Snapshot
from shopfeed.platform.types import Money

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

# BatchGetItem reads at most 100 keys a call.
_BATCH_KEYS: Final = 100
# Transaction labels: reasons are read by these, never by position.
LAYOUT: Final = "stock-layout"
BUCKET: Final = "bucket:"
LEGACY: Final = "stock:"
# A resize or restock re-reads and retries when an order changed a bucket it redistributes.
_ADJUST_ATTEMPTS: Final = 4
# How long a container keeps a layout for placing orders (decision 154).
LAYOUT_TTL_S: Final = 30.0
# How long a container keeps the page total of a product of more than 100 buckets (decision 229).
PAGE_TOTAL_TTL_S: Final = 2.0
# A resize of a large warehouse adds or removes at most this many buckets a transaction (decision 227).
_STEP_BUCKETS: Final = 48
# POST /stock spreads a restock over at most this many buckets (with its key record: one transaction).
_RESTOCK_SPREAD: Final = 96
# Short buckets an order of a product with more than 100 buckets meets before it reads them all.
SHORT_GUESSES: Final = 3
# A price change made by an API call stops starting writes after this long (the function's timeout
# is 10 s, a call's worst case 7.7 s is not waited for: decision 225).
REPRICE_BUDGET_S: Final = 5.0
# A price change writes a product's buckets this many at a time (one UpdateItem each: decision 225).
REPRICE_WORKERS: Final = 16

RESTOCK_SNAPSHOT = Snapshot(Restocked, version=1)


def bucket_label(product_id: str, ref: BucketRef) -> str:
    return f"{BUCKET}{product_id}:{ref.warehouse}:{ref.bucket}"


def even_split(total: int, count: int) -> list[int]:
    """``total`` units over ``count`` buckets, the remainder one each to the first buckets."""
    share, rest = divmod(total, count)
    return [share + (1 if n < rest else 0) for n in range(count)]


def take_op(table: dynamo.Table, product_id: str, take: StockTake, unit_price: Money) -> "TransactWriteItemTypeDef":
    """An order's take from one bucket: only if the bucket holds the units, still carries the price
    the customer quoted and is not closed by a price change being written (decision 225; a failure
    returns the bucket as it was: its level, its price, its seal)."""
    condition = (
        Attr("PK").exists()
        & Attr("available").gte(take.quantity)
        & Attr("price.amount").eq(unit_price.amount)
        & Attr("price.currency").eq(unit_price.currency)
        & Attr(items.SEALED).not_exists()
    )
    return table.update_op(
        keys.stock_bucket(product_id, take.warehouse, take.bucket),
        Update(add={"available": -take.quantity}),
        condition=condition,
        return_old_on_failure=True,
    )


def restore_op(table: dynamo.Table, product_id: str, ref: BucketRef, units: int) -> "TransactWriteItemTypeDef":
    """Units back into a bucket (a cancel, an expiry). Guarded by the bucket's existence: an ADD on a
    missing key would create a bucket outside the layout, whose units no read would ever count."""
    return table.update_op(
        keys.stock_bucket(product_id, ref.warehouse, ref.bucket),
        Update(add={"available": units}),
        condition=Attr("PK").exists(),
        return_old_on_failure=True,
    )


def restore_target(layout: StockLayout | None, take: StockTake) -> BucketRef:
    """Where a take's units go back: its own bucket while the layout holds it; after a resize removed
    it, the same number modulo the warehouse's count now; a warehouse gone (or a line placed before
    buckets, whose take is the default warehouse's bucket 0) goes to the first warehouse left."""
    ref = BucketRef(warehouse=take.warehouse, bucket=take.bucket)
    if layout is None or layout.holds(ref):
        return ref
    count = layout.warehouses.get(take.warehouse)
    if count:
        return BucketRef(warehouse=take.warehouse, bucket=take.bucket % count)
    warehouse = DEFAULT_WAREHOUSE if DEFAULT_WAREHOUSE in layout.warehouses else min(layout.warehouses)
    return BucketRef(warehouse=warehouse, bucket=0)


def legacy_take(quantity: int) -> StockTake:
    """Where a line placed before buckets took its units from (the backfill put them there)."""
    return StockTake(warehouse=DEFAULT_WAREHOUSE, bucket=0, quantity=quantity)


@dataclass
class LineStock:
    """What one order placement knows of a product's buckets while it chooses where to take from:
    levels from one strong read of every bucket, buckets to avoid on the next try (held by a
    concurrent transaction), and whether a take found its bucket short (``must_read``: the next try
    reads every bucket first instead of guessing one by one)."""

    layout: StockLayout
    known: dict[BucketRef, int] = field(default_factory=dict)
    avoid: set[BucketRef] = field(default_factory=set)
    read_all: bool = False
    must_read: bool = False
    short: int = 0

    def found_short(self, ref: BucketRef, available: int) -> None:
        """A take found ``ref`` holding ``available``. Up to one BatchGetItem's worth of buckets the
        next try reads them all; a product with more guesses another bucket first, up to
        ``SHORT_GUESSES`` short ones, since reading 500 buckets is 5 BatchGetItems (decision 226)."""
        self.known[ref] = available
        self.read_all = False
        self.short += 1
        self.must_read = len(self.layout.buckets) <= _BATCH_KEYS or self.short >= SHORT_GUESSES

    def learn_all(self, levels: Iterable[BucketLevel]) -> None:
        self.known = {level.ref: level.available for level in levels}
        self.avoid = set()
        self.read_all, self.must_read, self.short = True, False, 0

    @property
    def total(self) -> int:
        return sum(self.known.values())

    def replace(self, layout: StockLayout) -> None:
        """Start over with ``layout`` (the one read had a bucket a resize has removed since)."""
        self.layout, self.known, self.avoid, self.read_all, self.must_read = layout, {}, set(), False, False
        self.short = 0

    def choose(self, quantity: int) -> tuple[StockTake, ...] | None:
        """The buckets to take ``quantity`` from; None when only a strong read of every bucket can tell.

        One bucket when any may hold enough, chosen at random among them (concurrent buyers spread
        over the buckets instead of queueing on the fullest); once every level is known and no bucket
        holds enough alone, the fewest buckets that do together, fullest first (decision 156)."""
        if self.must_read:
            return None
        unknown = 0 if self.read_all else quantity
        maybe = [r for r in self.layout.buckets if r not in self.avoid and self.known.get(r, unknown) >= quantity]
        if not maybe and self.read_all:
            # Every bucket that holds enough was busy: conflicts pass, try them again.
            maybe = [r for r in self.layout.buckets if self.known.get(r, 0) >= quantity]
        if maybe:
            ref = random.choice(maybe)
            return (StockTake(warehouse=ref.warehouse, bucket=ref.bucket, quantity=quantity),)
        if not self.read_all:
            return None
        if self.total < quantity:
            return ()
        takes, left = [], quantity
        for ref, level in sorted(self.known.items(), key=lambda kv: -kv[1]):
            if left == 0 or level <= 0:
                break
            part = min(level, left)
            takes.append(StockTake(warehouse=ref.warehouse, bucket=ref.bucket, quantity=part))
            left -= part
        return tuple(takes)


class StockRepository:
    """CommerceTable as stock buckets: the layout, the levels, moves between buckets, restocks and
    resizes. Orders take and restore through ``take_op`` / ``restore_op`` in their own transactions."""

    def __init__(
        self, table: dynamo.Table, layout_ttl: float = LAYOUT_TTL_S, page_total_ttl: float = PAGE_TOTAL_TTL_S
    ) -> None:
        self._table = table
        self._layout_ttl = layout_ttl
        self._recent: dict[str, tuple[float, StockLayout]] = {}
        self._page_total_ttl = page_total_ttl
        self._totals: dict[str, tuple[float, int, int]] = {}

    # -- reads

    def recent_layouts(self, product_ids: Sequence[str]) -> dict[str, StockLayout]:
        """Layouts as orders use them: kept per container for ``layout_ttl`` seconds, so a warm order is
        one TransactWriteItems. A stale layout is safe: every take is guarded by its bucket's own
        level and existence, a removed bucket makes the order read its layout again (``remember``),
        and a bucket added by a resize is used once the kept layout expires (decision 154)."""
        now = time.monotonic()
        kept = {p: hit[1] for p in product_ids if (hit := self._recent.get(p)) and now - hit[0] < self._layout_ttl}
        missing = [p for p in product_ids if p not in kept]
        if missing:
            for layout in self.layouts(missing, consistent=False).values():
                self.remember(layout)
                kept[layout.product_id] = layout
        return kept

    def remember(self, layout: StockLayout) -> None:
        self._recent[layout.product_id] = (time.monotonic(), layout)

    def layout(self, product_id: str) -> StockLayout:
        """The product's layout, strongly consistent; NotFound if the product has none."""
        found = self.find_layout(product_id)
        if found is None:
            raise NotFound("product", product_id)
        return found

    def find_layout(self, product_id: str, consistent: bool = True) -> StockLayout | None:
        item = self._table.get(keys.stock_layout(product_id), consistent=consistent)
        return items.stock_layout_from(item) if item else None

    def layouts(self, product_ids: Sequence[str], consistent: bool = True) -> dict[str, StockLayout]:
        """The layouts of several products (one BatchGetItem per 100); products without one left out."""
        found: list[dynamo.Item] = []
        for start in range(0, len(product_ids), _BATCH_KEYS):
            chunk = product_ids[start : start + _BATCH_KEYS]
            found += self._table.get_many([keys.stock_layout(p) for p in chunk], consistent=consistent)
        return {str(item["product_id"]): items.stock_layout_from(item) for item in found}

    def levels(self, product_id: str) -> list[BucketLevel]:
        """Every bucket of the product, strongly consistent, warehouse by warehouse in bucket order."""
        return self.levels_of(self.layout(product_id))

    def levels_of(self, layout: StockLayout) -> list[BucketLevel]:
        """Every bucket of ``layout``, strongly consistent (one BatchGetItem: at most MAX_BUCKETS keys)."""
        return self.levels_of_many([layout])[layout.product_id]

    def levels_of_many(self, layouts: Sequence[StockLayout], consistent: bool = True) -> dict[str, list[BucketLevel]]:
        """Every bucket of each layout, strongly consistent unless told, one BatchGetItem per 100 buckets."""
        wanted = [(layout.product_id, ref) for layout in layouts for ref in layout.buckets]
        seen: dict[tuple[str, str, int], int] = {}
        attributes = ("product_id", "warehouse", "bucket", "available")
        for start in range(0, len(wanted), _BATCH_KEYS):
            chunk = wanted[start : start + _BATCH_KEYS]
            bucket_keys = [keys.stock_bucket(p, ref.warehouse, ref.bucket) for p, ref in chunk]
            for item in self._table.get_many(bucket_keys, attributes, consistent=consistent):
                seen[(str(item["product_id"]), str(item["warehouse"]), int(item["bucket"]))] = int(item["available"])
        # A bucket of the layout always exists (they are written together); a missing one reads as 0.
        return {
            layout.product_id: [
                BucketLevel(
                    warehouse=ref.warehouse,
                    bucket=ref.bucket,
                    available=seen.get((layout.product_id, ref.warehouse, ref.bucket), 0),
                )
                for ref in layout.buckets
            ]
            for layout in layouts
        }

    def page_total(self, layout: StockLayout) -> int:
        """The units a product page shows (decision 229). Up to one BatchGetItem of buckets (100), read
        fresh, strongly (decision 157). Past that, kept per container for ``page_total_ttl`` seconds
        (and while the layout's version holds) and read eventually consistent: a hot product's page
        views then cost no bucket read within the window, and a refresh of 500 buckets is 5
        BatchGetItems at 0.5 RCU a bucket, instead of 5 strong ones every view."""
        if len(layout.buckets) <= _BATCH_KEYS:
            return sum(level.available for level in self.levels_of(layout))
        now = time.monotonic()
        kept = self._totals.get(layout.product_id)
        if kept and kept[1] == layout.version and now - kept[0] < self._page_total_ttl:
            return kept[2]
        levels = self.levels_of_many([layout], consistent=False)[layout.product_id]
        total = sum(level.available for level in levels)
        self._totals[layout.product_id] = (now, layout.version, total)
        return total

    def total(self, product_id: str) -> int | None:
        """The units of every bucket (None without a layout): one GetItem and one BatchGetItem."""
        found = self.find_layout(product_id)
        return None if found is None else sum(level.available for level in self.levels_of(found))

    # -- writes

    def restore_ops(self, lines: Iterable[OrderLine]) -> list[tuple[str, "TransactWriteItemTypeDef"]]:
        """The labelled items that put the units of ``lines`` (of one order or several) back where they
        came from, summed per bucket (an item appears once in a transaction). Reads the products'
        layouts strongly (one BatchGetItem): a take whose bucket a resize removed goes to its warehouse's
        bucket of the same number modulo its count now (``restore_target``). A product not backfilled
        yet gets its units back on its item, where its stock still is (decision 163)."""
        lines = list(lines)
        layouts = self.layouts(sorted({line.product_id for line in lines}))
        units: Counter[tuple[str, BucketRef]] = Counter()
        legacy: Counter[str] = Counter()
        for line in lines:
            layout = layouts.get(line.product_id)
            if layout is None:
                legacy[line.product_id] += line.quantity
                continue
            for take in line.takes or (legacy_take(line.quantity),):
                units[(line.product_id, restore_target(layout, take))] += take.quantity
        ops = [
            (bucket_label(product_id, ref), restore_op(self._table, product_id, ref, quantity))
            for (product_id, ref), quantity in units.items()
        ]
        ops += [
            (
                f"{LEGACY}{product_id}",
                self._table.update_op(
                    keys.product(product_id),
                    Update(add={items.LEGACY_AVAILABLE: quantity}),
                    condition=Attr("PK").exists(),
                    return_old_on_failure=True,
                ),
            )
            for product_id, quantity in legacy.items()
        ]
        return ops

    def create_ops(self, layout: StockLayout, initial: int) -> list[tuple[str, "TransactWriteItemTypeDef"]]:
        """The labelled items a new product's stock takes in the product's own transaction: its layout
        and every bucket, ``initial`` units split evenly over them."""
        ops: list[tuple[str, TransactWriteItemTypeDef]] = [
            (LAYOUT, self._table.put_op(items.stock_layout_item(layout), if_absent=True))
        ]
        for warehouse, count in sorted(layout.warehouses.items()):
            share = even_split(initial if warehouse == DEFAULT_WAREHOUSE else 0, count)
            for n in range(count):
                ref = BucketRef(warehouse=warehouse, bucket=n)
                item = items.stock_bucket_item(layout, ref, share[n])
                ops.append((bucket_label(layout.product_id, ref), self._table.put_op(item, if_absent=True)))
        return ops

    def reprice_ops(self, layout: StockLayout, price: Money) -> list[tuple[str, "TransactWriteItemTypeDef"]]:
        """The first step of a price change, for the product update's own transaction: the layout takes
        the new price, the next price version and the ``repricing`` mark, guarded by its version (a
        resize or another price change in between cancels it). The buckets follow in
        ``finish_reprice``, one UpdateItem each (decision 225)."""
        change = Update(
            set={"price": price.model_dump(), "price_version": layout.price_version + 1, "repricing": True},
            add={"version": 1},
        )
        op = self._table.update_op(
            keys.stock_layout(layout.product_id),
            change,
            condition=Attr("version").eq(layout.version),
            return_old_on_failure=True,
        )
        return [(LAYOUT, op)]

    @staticmethod
    def repriced(layout: StockLayout, price: Money) -> StockLayout:
        """``layout`` as ``reprice_ops`` leaves it."""
        return layout.model_copy(
            update={
                "price": price,
                "price_version": layout.price_version + 1,
                "version": layout.version + 1,
                "repricing": True,
            }
        )

    def finish_reprice(self, layout: StockLayout, budget_s: float | None = None) -> bool:
        """Carry the layout's price to every bucket, in two passes, then clear the layout's mark.

        First every bucket is sealed at the new price (``priced`` the layout's price version, ``sealed``
        set): an order quoting the old price meets the new one and is answered ``price-changed``, an
        order quoting the new one is refused by the seal and tries another bucket. Only once every
        bucket is sealed are they opened: so every sale at the old price happens before every sale at
        the new one, never the two at once. Each write is one conditional UpdateItem (a transaction
        over many buckets would meet an order on one of them nearly every time during a sale), guarded
        by the price version, so the passes can be run again (by anyone: a later price change or resize
        of the product resumes an interrupted one) and a slower, older price change never writes over a
        newer one. A run first reads where the buckets stand (strong, one BatchGetItem per 100) and
        writes only what is left, so a run cut short by its timeout is progress the next one keeps.
        Workers write in parallel: the seal lasts the two passes. With ``budget_s``, no write starts
        after that many seconds (an API call stops before its function's timeout would cut it): False
        when some were left, the mark still set, for the next run."""
        deadline = None if budget_s is None else time.monotonic() + budget_s
        version = layout.price_version
        sealed = Update(set={"price": layout.price.model_dump(), items.PRICED: version, items.SEALED: version})
        older = Attr("PK").exists() & (Attr(items.PRICED).not_exists() | Attr(items.PRICED).lt(version))
        opened = Update(remove=[items.SEALED])
        at_version = Attr(items.PRICED).eq(version)
        stand = self._price_marks(layout)
        to_seal = [key for key, (priced, _) in stand if priced < version]
        to_open = [key for key, (priced, seal) in stand if priced < version or seal]
        with ThreadPoolExecutor(max_workers=REPRICE_WORKERS) as pool:
            if not all(pool.map(lambda key: self._write_if(key, sealed, older, deadline), to_seal)):
                return False  # not every bucket sealed: none may open
            if not all(pool.map(lambda key: self._write_if(key, opened, at_version, deadline), to_open)):
                return False
        self._write_if(
            keys.stock_layout(layout.product_id),
            Update(set={"repricing": False}),
            Attr("price_version").eq(version),
        )
        return True

    def _price_marks(self, layout: StockLayout) -> list[tuple[keys.Key, tuple[int, bool]]]:
        """Each bucket's key with its price version (1 when it has none) and whether it is sealed."""
        bucket_keys = [keys.stock_bucket(layout.product_id, ref.warehouse, ref.bucket) for ref in layout.buckets]
        marks: dict[str, tuple[int, bool]] = {}
        for start in range(0, len(bucket_keys), _BATCH_KEYS):
            for item in self._table.get_many(
                bucket_keys[start : start + _BATCH_KEYS], ("PK", items.PRICED, items.SEALED)
            ):
                marks[str(item["PK"])] = (int(item.get(items.PRICED, 1)), items.SEALED in item)
        # A bucket the read did not find is written anyway: its condition refuses it if it is gone.
        return [(key, marks.get(key["PK"], (0, True))) for key in bucket_keys]

    def _write_if(self, key: keys.Key, change: Update, condition: ConditionBase, deadline: float | None = None) -> bool:
        """One conditional UpdateItem; a failed condition is work already done (or a newer price
        change's), not an error. False, writing nothing, past ``deadline`` (time.monotonic)."""
        if deadline is not None and time.monotonic() >= deadline:
            return False
        with contextlib.suppress(dynamo.ConditionFailed):
            self._table.update(key, change, condition=condition)
        return True

    def move(self, product_id: str, source: BucketRef, target: BucketRef, units: int) -> None:
        """Move ``units`` from ``source`` to ``target`` in one TransactWriteItems: the source guarded
        ``available >= units``, the target an ADD guarded by its existence. No unit is made or lost:
        either both items change or neither. Raises BucketShort when the source holds fewer (nothing
        moved), NotFound when either bucket does not exist, Contention when concurrent orders kept
        holding the buckets."""
        if units < 1 or source == target:
            raise ValueError("a move takes at least one unit between two different buckets")
        transaction = Transaction()
        transaction.add(
            "source",
            self._table.update_op(
                keys.stock_bucket(product_id, source.warehouse, source.bucket),
                Update(add={"available": -units}),
                condition=Attr("PK").exists() & Attr("available").gte(units),
                return_old_on_failure=True,
            ),
        )
        transaction.add("target", restore_op(self._table, product_id, target, units))
        try:
            self._table.transact(transaction, busy=f"stock of product {product_id}")
        except dynamo.TransactionCancelled as cancelled:
            for label, ref in (("source", source), ("target", target)):
                reason = cancelled.reason(label)
                if reason.failed_condition and reason.item is None:
                    raise NotFound("stock bucket", f"{product_id}/{ref.warehouse}/{ref.bucket}") from cancelled
            reason = cancelled.reason("source")
            if reason.failed_condition and reason.item is not None:
                available = int(reason.item["available"])
                raise BucketShort(product_id, source.warehouse, source.bucket, units, available) from cancelled
            raise

    def adjust_warehouse(
        self, product_id: str, warehouse: str, expected_version: int, restock: int, buckets: int | None
    ) -> tuple[StockLayout, list[BucketLevel]]:
        """Restock a warehouse by ``restock`` units and set its bucket count (``buckets``; None keeps it,
        a warehouse not in the layout starts with one), then spread its units evenly over its buckets:
        one TransactWriteItems guarded by the layout's version (If-Match). Units are exact under
        concurrent orders: surviving buckets change by ADD deltas guarded ``available >= -delta``, a
        removed bucket is deleted only at the level read (its units go to the survivors), and the
        deltas sum to ``restock``. Answers the layout and the warehouse's levels as written."""
        for _ in range(_ADJUST_ATTEMPTS):
            layout = self.layout(product_id)
            if layout.version != expected_version:
                raise StaleVersion("inventory", product_id, layout.version)
            if layout.repricing:
                # New buckets take the layout's price: the price change reaches the others first.
                if not self.finish_reprice(layout, REPRICE_BUDGET_S):
                    raise Contention(f"the price change of product {product_id}")
                layout = layout.model_copy(update={"repricing": False})
            before = layout.warehouses.get(warehouse, 0)
            if max(before, buckets or 1) + 1 > dynamo.MAX_TRANSACTION_ITEMS:
                return self._adjust_in_steps(layout, warehouse, restock, buckets or before)
            transaction, after, levels = self._adjustment(layout, warehouse, restock, buckets)
            if self._changed_layout(product_id, transaction):
                return after, levels
        raise Contention(f"stock of product {product_id}")

    def _adjustment(
        self, layout: StockLayout, warehouse: str, restock: int, buckets: int | None
    ) -> tuple[Transaction, StockLayout, list[BucketLevel]]:
        product_id = layout.product_id
        before = layout.warehouses.get(warehouse, 0)
        count = buckets if buckets is not None else max(before, 1)
        warehouses = _checked(layout, warehouse, count)
        after = layout.model_copy(update={"warehouses": warehouses, "version": layout.version + 1})
        current = [level for level in self.levels_of(layout) if level.warehouse == warehouse]
        total = sum(level.available for level in current) + restock
        if total > MAX_STOCK * count:
            raise InvalidRequest(f"A bucket holds at most {MAX_STOCK} units.")
        target = even_split(total, count)
        transaction = self._resized(layout, warehouses)
        for level in current:
            ref, key = level.ref, keys.stock_bucket(product_id, warehouse, level.bucket)
            if level.bucket >= count:
                exact = Attr("available").eq(level.available)
                transaction.add(bucket_label(product_id, ref), self._table.delete_op(key, condition=exact))
                continue
            delta = target[level.bucket] - level.available
            if delta:
                guard = Attr("PK").exists() & Attr("available").gte(-delta)
                transaction.add(
                    bucket_label(product_id, ref),
                    self._table.update_op(key, Update(add={"available": delta}), condition=guard),
                )
        for n in range(before, count):
            ref = BucketRef(warehouse=warehouse, bucket=n)
            item = items.stock_bucket_item(layout, ref, target[n])
            transaction.add(bucket_label(product_id, ref), self._table.put_op(item, if_absent=True))
        levels = [BucketLevel(warehouse=warehouse, bucket=n, available=target[n]) for n in range(count)]
        return transaction, after, levels

    def _resized(self, layout: StockLayout, warehouses: Mapping[str, int]) -> Transaction:
        """A transaction that starts with the layout's new bucket counts, guarded by its version."""
        transaction = Transaction()
        transaction.add(
            LAYOUT,
            self._table.update_op(
                keys.stock_layout(layout.product_id),
                Update(set={"warehouses": dict(warehouses)}, add={"version": 1}),
                condition=Attr("version").eq(layout.version),
                return_old_on_failure=True,
            ),
        )
        return transaction

    def _changed_layout(self, product_id: str, transaction: Transaction) -> bool:
        """Commit a layout change guarded by the layout's version; False when an order took from a
        bucket it changes since the levels were read (read again), StaleVersion when the layout moved."""
        try:
            self._table.transact(transaction, busy=f"stock of product {product_id}")
        except dynamo.TransactionCancelled as cancelled:
            if cancelled.failed(LAYOUT):
                current = cancelled.reason(LAYOUT).item
                if current is None:
                    raise NotFound("product", product_id) from cancelled
                raise StaleVersion("inventory", product_id, int(current["version"])) from cancelled
            if cancelled.failed_labels(BUCKET):
                return False
            raise
        return True

    def _adjust_in_steps(
        self, layout: StockLayout, warehouse: str, restock: int, count: int
    ) -> tuple[StockLayout, list[BucketLevel]]:
        """A resize or restock of a warehouse of more buckets than one transaction holds (decision 227):
        steps of at most ``_STEP_BUCKETS`` buckets added or removed, each one TransactWriteItems guarded
        by the version the step before wrote (the first by If-Match), each leaving a layout that is
        whole on its own: new buckets are put before the layout names them, removed ones are deleted at
        the level read with their units added to survivors. The restock goes into the first step. Then
        the warehouse is evened out by zero-sum moves (``even_out``). Interrupted, it leaves a valid
        layout at the last step's version: nothing lost, and the admin's PUT again finishes it."""
        product_id = layout.product_id
        _checked(layout, warehouse, count)
        held = sum(level.available for level in self.levels_of(layout) if level.warehouse == warehouse)
        if held + restock > MAX_STOCK * count:
            raise InvalidRequest(f"A bucket holds at most {MAX_STOCK} units.")
        current, left, first = layout, restock, True
        for _ in range(_ADJUST_ATTEMPTS * (1 + MAX_BUCKETS // _STEP_BUCKETS)):
            before = current.warehouses.get(warehouse, 0)
            if before == count and not first:
                self.even_out(current, warehouse)
                return current, [level for level in self.levels_of(current) if level.warehouse == warehouse]
            step = min(count, before + _STEP_BUCKETS) if count >= before else max(count, before - _STEP_BUCKETS)
            transaction, after = self._step(current, warehouse, left, step)
            if self._changed_layout(product_id, transaction):
                current, left, first = after, 0, False
        raise Contention(f"stock of product {product_id}")

    def _step(self, layout: StockLayout, warehouse: str, restock: int, count: int) -> tuple[Transaction, StockLayout]:
        """One step of ``_adjust_in_steps``: the warehouse from its count to ``count`` (at most
        ``_STEP_BUCKETS`` apart), ``restock`` units in, every unit kept."""
        product_id = layout.product_id
        before = layout.warehouses.get(warehouse, 0)
        warehouses = {**layout.warehouses, warehouse: count}
        after = layout.model_copy(update={"warehouses": warehouses, "version": layout.version + 1})
        transaction = self._resized(layout, warehouses)
        additions: Counter[int] = Counter()
        if count > before:
            # New buckets, the restock spread over them: put before the layout names them (same commit).
            for n, units in zip(range(before, count), even_split(restock, count - before), strict=True):
                ref = BucketRef(warehouse=warehouse, bucket=n)
                item = items.stock_bucket_item(layout, ref, units)
                transaction.add(bucket_label(product_id, ref), self._table.put_op(item, if_absent=True))
        else:
            removed = [BucketRef(warehouse=warehouse, bucket=n) for n in range(count, before)]
            found = self._table.get_many(
                [keys.stock_bucket(product_id, ref.warehouse, ref.bucket) for ref in removed], ("bucket", "available")
            )
            levels = {int(item["bucket"]): int(item["available"]) for item in found}
            for ref in removed:
                level = levels.get(ref.bucket, 0)
                key = keys.stock_bucket(product_id, warehouse, ref.bucket)
                transaction.add(
                    bucket_label(product_id, ref), self._table.delete_op(key, condition=Attr("available").eq(level))
                )
                additions[ref.bucket % count] += level
            for n, units in enumerate(even_split(restock, min(count, _STEP_BUCKETS))):
                additions[n] += units
        for n, units in sorted(additions.items()):
            if units:
                ref = BucketRef(warehouse=warehouse, bucket=n)
                key = keys.stock_bucket(product_id, warehouse, n)
                change = Update(add={"available": units})
                transaction.add(
                    bucket_label(product_id, ref), self._table.update_op(key, change, condition=Attr("PK").exists())
                )
        return transaction, after

    def even_out(self, layout: StockLayout, warehouse: str) -> None:
        """Even a warehouse's buckets by moves, as many per TransactWriteItems as its 100 items hold:
        each transaction is zero-sum (donors guarded ``available >= units``, receivers by existence),
        so an order in between can cancel one, never make or lose a unit. A cancelled group is planned
        again from a fresh read, a few rounds; what is left uneven the rebalancer evens later."""
        for _ in range(_ADJUST_ATTEMPTS):
            levels = [level for level in self.levels_of(layout) if level.warehouse == warehouse]
            target = even_split(sum(level.available for level in levels), len(levels))
            donors = [(lv.ref, lv.available - target[lv.bucket]) for lv in levels if lv.available > target[lv.bucket]]
            takers = [(lv.ref, target[lv.bucket] - lv.available) for lv in levels if lv.available < target[lv.bucket]]
            groups = _zero_sum_groups(donors, takers, dynamo.MAX_TRANSACTION_ITEMS)
            if not groups:
                return
            even = True
            for deltas in groups:
                transaction = Transaction()
                for ref, delta in deltas.items():
                    key = keys.stock_bucket(layout.product_id, ref.warehouse, ref.bucket)
                    guard = Attr("PK").exists() & Attr("available").gte(-delta) if delta < 0 else Attr("PK").exists()
                    op = self._table.update_op(key, Update(add={"available": delta}), condition=guard)
                    transaction.add(bucket_label(layout.product_id, ref), op)
                try:
                    self._table.transact(transaction, busy=f"stock of product {layout.product_id}")
                except (dynamo.TransactionCancelled, Contention):
                    even = False  # orders took from a donor since the read: plan again
            if even:
                return

    def restock(
        self, product_id: str, quantity: int, request: IdempotentRequest, restocked: Restocked, now: datetime
    ) -> Created[Restocked]:
        """POST /stock: ``quantity`` units into the default warehouse (the first one when the layout has
        no default), spread evenly over its buckets, and the Idempotency-Key, in one transaction. A
        product not backfilled yet keeps its number on its item: restocked there (decision 163)."""
        for _ in range(_ADJUST_ATTEMPTS):
            layout = self.find_layout(product_id)
            additions: list[tuple[str, keys.Key, int]] = [(LEGACY, keys.product(product_id), quantity)]
            if layout is not None:
                warehouse = DEFAULT_WAREHOUSE if DEFAULT_WAREHOUSE in layout.warehouses else min(layout.warehouses)
                additions = [
                    (bucket_label(product_id, BucketRef(warehouse=warehouse, bucket=n)), key, share)
                    # Past 96 buckets, over the first 96 (the key record takes the 100th item); the
                    # rebalancer, or an inventory PUT, evens them (decision 227).
                    for n, share in enumerate(even_split(quantity, min(layout.warehouses[warehouse], _RESTOCK_SPREAD)))
                    if share and (key := keys.stock_bucket(product_id, warehouse, n))
                ]
            transaction = Transaction()
            for label, key, units in additions:
                # The bound is checked where the sum is made: a bucket never passes MAX_STOCK.
                guard = Attr("PK").exists() & Attr("available").lte(MAX_STOCK - units)
                change = Update(add={"available": units})
                transaction.add(label, self._table.update_op(key, change, condition=guard, return_old_on_failure=True))
            busy = f"product {product_id}"
            try:
                return idempotency.commit(self._table, transaction, request, RESTOCK_SNAPSHOT, restocked, now, busy)
            except dynamo.TransactionCancelled as cancelled:
                failed = cancelled.failed_labels()
                legacy = failed[LEGACY].item if LEGACY in failed else {}
                if legacy is None:
                    raise NotFound("product", product_id) from cancelled
                if LEGACY in failed and items.LEGACY_AVAILABLE not in legacy:
                    continue  # the backfill moved the number into buckets since the read
                if any(reason.item is None for reason in failed.values()):
                    continue  # a resize removed a bucket since the layout was read
                if failed:
                    raise InvalidRequest(
                        f"Restocking {quantity} would take product {product_id} past the maximum stock of {MAX_STOCK}."
                    ) from cancelled
                raise
        raise Contention(f"stock of product {product_id}")


def _checked(layout: StockLayout, warehouse: str, count: int) -> dict[str, int]:
    """The layout's warehouses with ``warehouse`` at ``count`` buckets, within MAX_BUCKETS in all."""
    warehouses = {**layout.warehouses, warehouse: count}
    if sum(warehouses.values()) > MAX_BUCKETS:
        raise InvalidRequest(f"A product's stock is split into at most {MAX_BUCKETS} buckets in all.")
    return warehouses


def _zero_sum_groups(
    donors: Sequence[tuple[BucketRef, int]], takers: Sequence[tuple[BucketRef, int]], limit: int
) -> list[dict[BucketRef, int]]:
    """Moves from ``donors`` (surplus) to ``takers`` (shortfall), grouped so a group names at most
    ``limit`` buckets and its deltas sum to zero: each group is one transaction."""
    groups: list[dict[BucketRef, int]] = []
    group: Counter[BucketRef] = Counter()
    give, take = [units for _, units in donors], [units for _, units in takers]
    d = t = 0
    while d < len(donors) and t < len(takers):
        source, target = donors[d][0], takers[t][0]
        if len(set(group) | {source, target}) > limit:
            groups.append(dict(group))
            group = Counter()
        units = min(give[d], take[t])
        group[source] -= units
        group[target] += units
        give[d] -= units
        take[t] -= units
        d += give[d] == 0
        t += take[t] == 0
    if group:
        groups.append(dict(group))
    return groups


def _moved_into_buckets(table: dynamo.Table, product_id: str, available: int, price: Money) -> Transaction:
    """The backfill's transaction for one product: its number leaves its item (only if it is still the
    one read) and becomes its layout and one bucket of the default warehouse holding it."""
    layout = new_layout(product_id, price)
    transaction = Transaction()
    transaction.add(
        LEGACY,
        table.update_op(
            keys.product(product_id),
            Update(remove=[items.LEGACY_AVAILABLE]),
            condition=Attr(items.LEGACY_AVAILABLE).eq(available),
            return_old_on_failure=True,
        ),
    )
    for label, op in StockRepository(table).create_ops(layout, available):
        transaction.add(label, op)
    return transaction


def move_into_buckets(table: dynamo.Table, product_id: str, available: int, price: Money) -> bool:
    """Move a product's single stock number into its buckets (``make backfill``, decision 163): one
    transaction, so no order, cancel or restock in between can be lost or counted twice; False (nothing
    written) when the item's number changed since it was read (a restock, a cancel: read it again) or
    the product already has buckets."""
    try:
        table.transact(_moved_into_buckets(table, product_id, available, price), busy=f"product {product_id}")
    except dynamo.TransactionCancelled:
        return False
    return True


def new_layout(product_id: str, price: Money, buckets: Mapping[str, int] | None = None) -> StockLayout:
    """A new product's layout: one bucket in the default warehouse unless told otherwise."""
    return StockLayout(
        product_id=product_id, warehouses=dict(buckets or {DEFAULT_WAREHOUSE: 1}), price=price, version=1
    )
