"""The order archive (ECOM-011): orders older than 90 days leave CommerceTable for S3, exactly once.

A scheduled run takes the job's lease (runs never overlap), finishes every batch an earlier run left,
then archives old orders, oldest first, in batches of at most 100 orders of one month (a setting):

1. read each order's partition (one strong Query: header, lines, payments, shipments, ...);
2. **record** the batch's manifest (object key, order ids) before anything is written to S3;
3. **write** the object (JSON Lines, one line per item; Content-MD5, so S3's 200 confirms the bytes)
   and mark the manifest written;
4. **delete** each header only if its version is still the one archived, then the rest of each
   partition (BatchWriteItem), then **forget** the manifest.

A run that dies anywhere leaves a manifest the next run finishes: a recorded one is written again in
full (nothing of it was deleted, and the object key is the manifest's, so S3 never holds an order
twice); a written one reads its object back and deletes what is left. No order leaves the table
before its object is confirmed. An order changed after its object was written (a late cancel) keeps
its header: it stays hot and leaves the batch, whose object is written again without it (the
manifest first names the orders kept and the new object's MD5, so a run that dies in between
finishes the rewrite from the object itself); a later run archives the order.
"""

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from itertools import batched, groupby, islice
from typing import Any, Final, Protocol

from shopfeed.commerce import items, keys
from shopfeed.commerce.archive.repository import Candidate, HeaderDelete
from shopfeed.commerce.models import ArchiveBatch, BatchState, OrderStatus
from shopfeed.platform import dynamo
from shopfeed.platform.clock import iso, new_id, utc_now
from shopfeed.platform.objects import ObjectStore, md5_hex
from shopfeed.platform.observability import logger, metrics

# One object per batch: at most this many orders (ArchivePolicy.batch_orders, 100 as deployed).
BATCH_SIZE: Final = 100
CONTENT_TYPE: Final = "application/x-ndjson"
OBJECT_PREFIX: Final = "orders/"

Orders = dict[str, list[dynamo.Item]]
"""An archive batch's contents: order id → every item of the order's partition, in key order."""


class ArchiveStore(Protocol):
    """CommerceTable as the archive uses it (ArchiveRepository)."""

    def acquire_lease(self, run_id: str, now: str, held_until: str) -> bool: ...
    def release_lease(self, run_id: str) -> None: ...
    def unfinished_batches(self) -> list[ArchiveBatch]: ...
    def record(self, batch: ArchiveBatch) -> None: ...
    def mark_written(self, batch: ArchiveBatch, order_ids: Sequence[str], md5: str, now: str) -> ArchiveBatch: ...
    def narrow(self, batch: ArchiveBatch, order_ids: Sequence[str], md5: str, now: str) -> ArchiveBatch: ...
    def forget(self, batch: ArchiveBatch) -> None: ...
    def old_orders(self, placed_before: str) -> Iterator[Candidate]: ...
    def read_orders(self, order_ids: Sequence[str]) -> Orders: ...
    def delete_header(self, order_id: str, version: int) -> HeaderDelete: ...
    def delete_items(self, item_keys: Sequence[Mapping[str, str]]) -> int: ...


@dataclass(frozen=True)
class ArchivePolicy:
    """What a run archives and how much: orders placed more than ``after`` ago, at most
    ``max_orders`` of them in batches of ``batch_orders``, no new batch begun with less than
    ``stop_margin`` of the run's time left."""

    after: timedelta
    max_orders: int
    stop_margin: timedelta
    batch_orders: int = BATCH_SIZE


@dataclass(frozen=True)
class ArchivePorts:
    store: ArchiveStore
    objects: ObjectStore
    policy: ArchivePolicy


class Outcome(StrEnum):
    DONE = "done"  # no old order left
    LIMIT = "limit"  # max_orders reached: there may be more
    TIME = "time"  # stopped before the function's timeout: there may be more
    BUSY = "busy"  # another run holds the lease


@dataclass
class ArchiveReport:
    outcome: Outcome = Outcome.DONE
    batches: int = 0  # batches done: their orders are in S3 and out of the table
    resumed: int = 0  # of which an earlier run had begun
    orders: int = 0  # orders that left the table
    items: int = 0  # their items (headers included)
    kept: int = 0  # orders changed after their object was written: kept hot, taken out of the object
    paying: int = 0  # old orders with a payment in flight: left hot for a later run
    unpaid: int = 0  # old orders still Placed (their stock is held): left hot until paid or expired

    @property
    def counts(self) -> dict[str, int | str]:
        return {
            "outcome": self.outcome.value,
            "batches": self.batches,
            "resumed": self.resumed,
            "orders": self.orders,
            "items": self.items,
            "kept": self.kept,
            "paying": self.paying,
            "unpaid": self.unpaid,
        }


class ArchiveInconsistent(Exception):
    """A written batch's object is not one the batch wrote (edited or replaced outside the job).
    Nothing of the batch is deleted; an operator decides (docs/operations.md)."""

    def __init__(self, batch_id: str, reason: str) -> None:
        super().__init__(f"archive batch {batch_id}: {reason}")
        self.batch_id = batch_id


# -- the object's layout (pure) ---------------------------------------------------------------------


def object_key(month: str, batch_id: str) -> str:
    """``orders/month=YYYY-MM/<batch id>.jsonl``: Hive-style partitions, which Athena (and Glue's
    crawler) read as a ``month`` column, so a query for one month reads only that month's objects."""
    return f"{OBJECT_PREFIX}month={month}/{batch_id}.jsonl"


def plan_batches(candidates: Iterable[Candidate], size: int = BATCH_SIZE) -> Iterator[tuple[str, list[str]]]:
    """``(month, order ids)`` batches of at most ``size`` orders of one month of the age index.
    Candidates come oldest first, so a month's orders are consecutive."""
    for month, group in groupby(candidates, key=lambda candidate: candidate.month):
        for chunk in batched(group, size, strict=False):
            yield month, [candidate.order_id for candidate in chunk]


def encode(orders: Orders) -> bytes:
    """JSON Lines: one line per item, each order's items together in key order. Items are written as
    stored (keys and index keys included), so a line can be put back as it was."""
    lines = [
        json.dumps(item, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        for partition in orders.values()
        for item in partition
    ]
    return "".join(f"{line}\n" for line in lines).encode()


def decode(body: bytes) -> Orders:
    """The orders of an archive object (numbers as int, or float for the non-integral)."""
    orders: Orders = {}
    for line in body.decode().splitlines():
        if line:
            item: dict[str, Any] = json.loads(line)
            orders.setdefault(keys.parse_order_id(item[dynamo.PARTITION]), []).append(item)
    return orders


def header_of(partition: Sequence[dynamo.Item]) -> dynamo.Item:
    return next(item for item in partition if item[dynamo.SORT] == keys.META)


# -- the job ----------------------------------------------------------------------------------------


def run(ports: ArchivePorts, time_left_ms: Callable[[], int], clock: Callable[[], datetime] = utc_now) -> ArchiveReport:
    """One scheduled run; ``time_left_ms`` is the invocation's remaining time (Lambda's context)."""
    started = clock()
    run_id = new_id(started)
    report = ArchiveReport()
    # The lease lasts as long as this invocation may: a run that dies holds it no longer than Lambda
    # would have let it run, and one that ends releases it.
    held_until = started + timedelta(milliseconds=time_left_ms())
    if not ports.store.acquire_lease(run_id, iso(started), iso(held_until)):
        report.outcome = Outcome.BUSY
        return report
    job = _Job(ports, report, clock)
    margin_ms = ports.policy.stop_margin.total_seconds() * 1000
    try:
        for batch in ports.store.unfinished_batches():
            if time_left_ms() < margin_ms:
                report.outcome = Outcome.TIME
                return report
            job.finish(batch)
            report.resumed += 1
        budget = max(0, ports.policy.max_orders - report.orders)
        taken = _Counted(ports.store.old_orders(iso(started - ports.policy.after)))
        for _, order_ids in plan_batches(islice(taken, budget), ports.policy.batch_orders):
            if time_left_ms() < margin_ms:
                report.outcome = Outcome.TIME
                return report
            job.archive(order_ids)
        if taken.count >= budget:
            report.outcome = Outcome.LIMIT
        return report
    finally:
        ports.store.release_lease(run_id)


class _Counted(Iterator[Candidate]):
    """Candidates as they are taken, counted (a run that took its whole budget may have left some)."""

    def __init__(self, candidates: Iterator[Candidate]) -> None:
        self._candidates = candidates
        self.count = 0

    def __next__(self) -> Candidate:
        candidate = next(self._candidates)
        self.count += 1
        return candidate


class _Job:
    """The manifest's state machine for one run: RECORDED → (object written) → WRITTEN → (deleted) → gone."""

    def __init__(self, ports: ArchivePorts, report: ArchiveReport, clock: Callable[[], datetime]) -> None:
        self._store = ports.store
        self._objects = ports.objects
        self._report = report
        self._clock = clock

    def _now(self) -> str:
        return iso(self._clock())

    def archive(self, order_ids: Sequence[str]) -> None:
        """New batches of old orders (the index may list some that are gone already: they are left out).
        An object holds the orders of one month of placement, as the orders' headers say."""
        orders = self._store.read_orders(order_ids)
        # An order whose payment (or refund) is in flight is not done: archiving it would strand the
        # attempt the payment worker is about to settle. It stays until that settles (a later run takes it).
        in_flight = (items.PAYMENT_PENDING, items.REFUND_PENDING)
        paying = {o for o, partition in orders.items() if any(f in header_of(partition) for f in in_flight)}
        if paying:
            logger.info("old orders with a payment in flight: left hot", order_ids=sorted(paying))
            self._report.paying += len(paying)
        # An unpaid order holds its products' stock: archiving it would take that stock out of the shop
        # for good. The payment window expires it (restocking it), and a later run archives it.
        unpaid = {
            order_id
            for order_id, partition in orders.items()
            if order_id not in paying and header_of(partition)["status"] == OrderStatus.PLACED
        }
        if unpaid:
            logger.info("old orders still unpaid: left hot", order_ids=sorted(unpaid))
            self._report.unpaid += len(unpaid)
        by_month: dict[str, Orders] = {}
        for order_id, partition in orders.items():
            if order_id in paying or order_id in unpaid:
                continue
            by_month.setdefault(str(header_of(partition)["placed_at"])[:7], {})[order_id] = partition
        for month, group in by_month.items():
            now = self._clock()
            batch_id = new_id(now)
            batch = ArchiveBatch(
                batch_id=batch_id,
                month=month,
                object_key=object_key(month, batch_id),
                order_ids=tuple(group),
                state=BatchState.RECORDED,
                created_at=iso(now),
                updated_at=iso(now),
            )
            self._store.record(batch)
            self._write(batch, group)

    def finish(self, batch: ArchiveBatch) -> None:
        """A batch an earlier run left: written again in full if it was only recorded; if written, its
        object says what was archived, and what of it is still in the table is deleted."""
        logger.info("archive batch resumed", batch_id=batch.batch_id, state=batch.state.value)
        if batch.state is BatchState.WRITTEN and batch.md5 is not None:
            self._delete(batch, self._archived(batch, batch.md5))
            return
        orders = self._store.read_orders(batch.order_ids)
        if not orders:
            self._store.forget(batch)  # nothing confirmed, nothing deleted, and nothing left to write
            return
        self._write(batch, orders)

    def _archived(self, batch: ArchiveBatch, md5: str) -> Orders:
        """The orders a written batch's object holds, as the manifest names them. An object still
        holding orders the manifest dropped is one a run died rewriting: the rewrite is finished."""
        body = self._objects.get(batch.object_key)
        stored = decode(body)
        if missing := set(batch.order_ids) - set(stored):
            raise ArchiveInconsistent(batch.batch_id, f"the object lacks orders {sorted(missing)}")
        orders = {order_id: stored[order_id] for order_id in batch.order_ids}
        if md5_hex(body) != md5:
            rewritten = encode(orders)
            if md5_hex(rewritten) != md5:
                raise ArchiveInconsistent(batch.batch_id, f"the object is not the one written ({md5})")
            self._put(batch, rewritten, len(orders))
        return orders

    def _write(self, batch: ArchiveBatch, orders: Orders) -> None:
        md5 = self._put(batch, encode(orders), len(orders))
        batch = self._store.mark_written(batch, list(orders), md5, self._now())
        logger.info("archive batch written", batch_id=batch.batch_id, key=batch.object_key, orders=len(orders))
        self._delete(batch, orders)

    def _put(self, batch: ArchiveBatch, body: bytes, orders: int) -> str:
        metadata = {"batch-id": batch.batch_id, "month": batch.month, "orders": str(orders)}
        return self._objects.put(batch.object_key, body, CONTENT_TYPE, metadata)

    def _delete(self, batch: ArchiveBatch, orders: Orders) -> None:
        changed = {
            order_id
            for order_id, partition in orders.items()
            if self._store.delete_header(order_id, int(header_of(partition)["version"])) is HeaderDelete.CHANGED
        }
        if changed:
            orders = {order_id: partition for order_id, partition in orders.items() if order_id not in changed}
            batch = self._narrow(batch, orders, changed)
        rest = [
            {dynamo.PARTITION: item[dynamo.PARTITION], dynamo.SORT: item[dynamo.SORT]}
            for partition in orders.values()
            for item in partition
            if item[dynamo.SORT] != keys.META
        ]
        self._store.delete_items(rest)
        self._store.forget(batch)
        self._report.batches += 1
        self._report.orders += len(orders)
        self._report.items += sum(len(partition) for partition in orders.values())

    def _narrow(self, batch: ArchiveBatch, orders: Orders, changed: set[str]) -> ArchiveBatch:
        # The manifest names the orders kept and the new object's digest before the object changes:
        # a run that dies in between finds the old object and finishes the rewrite from it.
        logger.info("orders changed after archiving: kept hot", batch_id=batch.batch_id, order_ids=sorted(changed))
        self._report.kept += len(changed)
        body = encode(orders)
        batch = self._store.narrow(batch, list(orders), md5_hex(body), self._now())
        self._put(batch, body, len(orders))
        return batch


def record_run(report: ArchiveReport) -> dict[str, int | str]:
    """Log and count a run's outcome (the archiver function's answer)."""
    metrics.add_metric(name="OrdersArchived", unit="Count", value=report.orders)
    metrics.add_metric(name="ArchiveBatchesDone", unit="Count", value=report.batches)
    metrics.add_metric(name="ArchiveBatchesResumed", unit="Count", value=report.resumed)
    if report.outcome in (Outcome.LIMIT, Outcome.TIME):
        # Old orders may be left: a backlog that grows run after run needs a larger bound or more runs.
        metrics.add_metric(name="ArchiveRunCutShort", unit="Count", value=1)
    logger.info("archive run", extra=report.counts)
    return report.counts
