"""Inventory snapshots: every product's stock level, once a day, kept 90 days and readable by ops.

The daily job writes one ``SNAPSHOT#<day>`` / ``<product_id>`` item per product. The keys are the
day's and the product's, so running the job again the same day (a retry, a run by hand) writes the
same items again: never a second snapshot of a product for a day, and the later reading wins.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from shopfeed.commerce.models import InventoryLevel
from shopfeed.platform.clock import epoch_seconds, iso
from shopfeed.platform.identity import OPS, Caller
from shopfeed.platform.models import Page
from shopfeed.platform.observability import logger, metrics

if TYPE_CHECKING:
    from shopfeed.platform.search.rebuild import Pace


class SnapshotStore(Protocol):
    """CommerceTable as the snapshot job uses it (SnapshotRepository)."""

    def catalog_pages(self) -> Iterator[list[str]]: ...
    def stock_levels(self, product_ids: Sequence[str]) -> dict[str, dict[str, int]]: ...
    def write(self, day: str, levels: Sequence[InventoryLevel], expires_at: int) -> int: ...


class SnapshotReader(Protocol):
    """A day's snapshot as ops read it (SnapshotQueries)."""

    def list_day(self, day: str, limit: int, cursor: str | None) -> Page[InventoryLevel]: ...


@dataclass(frozen=True)
class SnapshotPorts:
    """The job's table, how long snapshots are kept, and how fast they are written."""

    store: SnapshotStore
    retention: timedelta
    writes_per_second: float


@dataclass
class SnapshotReport:
    day: str
    products: int = 0

    @property
    def counts(self) -> dict[str, int | str]:
        return {"day": self.day, "products": self.products}


def day_of(moment: datetime) -> str:
    """The UTC day a snapshot taken at ``moment`` belongs to (YYYY-MM-DD)."""
    return iso(moment)[:10]


def take_snapshot(store: SnapshotStore, now: datetime, retention: timedelta, pace: "Pace") -> SnapshotReport:
    """Snapshot every product's units, in all and per warehouse, for the day of ``now``, at most
    ``pace`` items a second (a day's items share one partition)."""
    report = SnapshotReport(day_of(now))
    taken_at, expires_at = iso(now), epoch_seconds(now + retention)
    for page in store.catalog_pages():
        levels = [
            InventoryLevel(
                product_id=product_id, available=sum(warehouses.values()), taken_at=taken_at, warehouses=warehouses
            )
            for product_id, warehouses in sorted(store.stock_levels(page).items())
        ]
        store.write(report.day, levels, expires_at)
        report.products += len(levels)
        pace.after(len(levels))
    return report


def run(ports: SnapshotPorts, now: datetime, pace: "Pace | None" = None) -> SnapshotReport:
    """One scheduled run: the snapshot of the day of ``now``."""
    # The rebuild jobs' pacer; imported here so the API, which reads snapshots, does not load it.
    from shopfeed.platform.search.rebuild import Pace

    return take_snapshot(ports.store, now, ports.retention, pace or Pace(ports.writes_per_second))


def record_snapshot(report: SnapshotReport) -> dict[str, int | str]:
    """Log and count a snapshot run (the snapshot function's answer)."""
    metrics.add_metric(name="InventoryProductsSnapshot", unit="Count", value=report.products)
    logger.info("inventory snapshot taken", extra=report.counts)
    return report.counts


def read_snapshot(
    reader: SnapshotReader, caller: Caller, day: str, limit: int, cursor: str | None
) -> Page[InventoryLevel]:
    """A day's stock levels in product id order (ops only). A day never taken, or expired, is empty."""
    caller.require(OPS, "read inventory snapshots")
    return reader.list_day(day, limit, cursor)
