"""The rebalancer: units moved from full stock buckets to nearly empty ones of the same warehouse.

Orders take from a bucket chosen at random among those that may hold enough (``stock.LineStock``), so
buckets drain unevenly: by chance during a sale, and for good when a resize or a restock left them
uneven. An empty bucket refuses nothing by itself (the order retries on another, and reads every
level before it refuses), but each pick of one is an attempt wasted (a cancelled transaction, billed),
and a line larger than every bucket has to be split over several. The rebalancer keeps every bucket
near its warehouse's even share.

**Woken by the buckets themselves** (decision 168): the event source mapping lets through only the
stream records of buckets left below the low-water mark (``REBALANCE_LOW_WATER``; its filter lists the
levels under the mark), so Lambda is not invoked for the other writes of a sale. A batch's records
are grouped by product; each product is planned from one strong read of its levels, not from the
records, so a record
delivered twice, late, or after another rebalance plans from what is there now and moves nothing
when the buckets are already even.

**No unit made or lost**: each move is ``StockRepository.move``, one TransactWriteItems that takes
from the source guarded ``available >= units`` and adds to the target. An order that took from the
source since the read cancels the move (``BucketShort``), a concurrent transaction may cancel it
(``Contention``, after the repository's retries): the move is skipped and counted, and the next record
of a low bucket plans again.

Units never cross warehouses: buckets split a warehouse's shelf for DynamoDB's sake, a move between
warehouses would be a transfer of goods.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from shopfeed.commerce import items
from shopfeed.commerce.errors import BucketShort
from shopfeed.commerce.models import BucketLevel, BucketRef, StockLayout
from shopfeed.platform import streams
from shopfeed.platform.errors import Contention, NotFound
from shopfeed.platform.observability import logger, metrics


@dataclass(frozen=True)
class Move:
    source: BucketRef
    target: BucketRef
    units: int


@dataclass(frozen=True)
class RebalancePolicy:
    """When a bucket is low (below ``low_water`` units) and how many moves one product gets per batch
    (each a transaction on two buckets that orders are using: a bound on what a rebalance takes from them)."""

    low_water: int
    max_moves: int


def plan(levels: Sequence[BucketLevel], policy: RebalancePolicy) -> list[Move]:
    """The moves that fill each low bucket up to its warehouse's even share, from the buckets above
    that share, fullest first; at most ``policy.max_moves``, lowest buckets first.

    A bucket is low below ``policy.low_water`` and below the share: when the warehouse holds too little
    for every bucket to reach the mark, nothing is moved (moving a few units around sells none more).
    The donors' surplus always covers the low buckets' shortfall (the levels above the share sum to at
    least those below it), and no donor gives below the share.
    """
    moves: list[Move] = []
    by_warehouse: dict[str, list[BucketLevel]] = defaultdict(list)
    for level in levels:
        by_warehouse[level.warehouse].append(level)
    for warehouse in sorted(by_warehouse):
        buckets = by_warehouse[warehouse]
        share = sum(level.available for level in buckets) // len(buckets)
        low = sorted(
            (lv for lv in buckets if lv.available < policy.low_water and lv.available < share),
            key=lambda lv: (lv.available, lv.bucket),
        )
        surplus = {lv.ref: lv.available - share for lv in buckets if lv.available > share}
        for target in low:
            wanted = share - target.available
            for source in sorted(surplus, key=lambda ref: (-surplus[ref], ref.bucket)):
                if wanted == 0 or len(moves) == policy.max_moves:
                    break
                units = min(wanted, surplus[source])
                moves.append(Move(source, target.ref, units))
                surplus[source] -= units
                wanted -= units
                if not surplus[source]:
                    del surplus[source]
    return moves


class StockMover(Protocol):
    """What the rebalancer needs of the stock (``StockRepository``)."""

    def find_layout(self, product_id: str, consistent: bool = True) -> StockLayout | None: ...
    def levels_of(self, layout: StockLayout) -> list[BucketLevel]: ...
    def move(self, product_id: str, source: BucketRef, target: BucketRef, units: int) -> None: ...


@dataclass(frozen=True)
class RebalancePorts:
    stock: StockMover
    policy: RebalancePolicy


@dataclass
class RebalanceReport:
    """Moves made, units they moved, and moves skipped (the source drained since the read, or held)."""

    moves: int = 0
    units: int = 0
    skipped: int = 0

    def add(self, other: "RebalanceReport") -> None:
        self.moves += other.moves
        self.units += other.units
        self.skipped += other.skipped


def rebalance(ports: RebalancePorts, product_id: str) -> RebalanceReport:
    """Even out the product's low buckets now: one strong read of its levels, then its moves."""
    report = RebalanceReport()
    layout = ports.stock.find_layout(product_id)
    if layout is None:
        return report  # deleted since the record was written: nothing to even out
    for move in plan(ports.stock.levels_of(layout), ports.policy):
        try:
            ports.stock.move(product_id, move.source, move.target, move.units)
        except (BucketShort, Contention) as skipped:
            # Orders got there first: the next low record plans again from the levels then.
            logger.info("stock move skipped", extra={"product_id": product_id, "reason": type(skipped).__name__})
            report.skipped += 1
            continue
        except NotFound:
            # A resize removed a bucket since the read: the moves planned from it are stale.
            report.skipped += 1
            break
        report.moves += 1
        report.units += move.units
    return report


def rebalance_low_buckets(ports: RebalancePorts, changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """The stream's bucket records: each product with a bucket left below the low-water mark is
    rebalanced once per batch, however many of its records the batch holds."""
    low, failures = streams.made_of(changes, lambda change: _low_product(change, ports.policy.low_water))
    total = RebalanceReport()
    for product_id in sorted(set(low.values())):
        report = rebalance(ports, product_id)
        total.add(report)
        if report.moves or report.skipped:
            logger.info("stock rebalanced", extra={"product_id": product_id, **vars(report)})
    _count(total)
    return failures


def _low_product(change: streams.ItemChange, low_water: int) -> str | None:
    image = change.new_image
    if image is None or image.get(streams.ENTITY_TYPE) != items.STOCK_BUCKET:
        return None
    return str(image["product_id"]) if int(image["available"]) < low_water else None


def _count(report: RebalanceReport) -> None:
    for name, value in (
        ("StockBucketsRebalanced", report.moves),
        ("StockUnitsMoved", report.units),
        ("StockMoveSkipped", report.skipped),
    ):
        metrics.add_metric(name=name, unit="Count", value=value)
