"""Rebuild an index from its table: the admin job behind ``make reindex`` (after a mapping change, or to
drop tombstones, or when the index was lost).

1. Create a new index beside the live one (``<alias>-v<revision>-<stamp>``) and fill it from a paged
   read of the table, at a bounded rate so the job never competes with the API for capacity.
2. Move the alias to it in one atomic call and delete the old index: readers switch with no gap.
3. Read the table once more and write to the alias. The sync worker kept writing to the old index during
   step 1; whatever changed then is in the table now, and versions make the second pass a no-op for
   everything else. (A delete during step 1 is the one change this misses: the item is gone from the
   table, its document stays until the next rebuild. Products are not deleted through the API.)
"""

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from shopfeed.platform import dynamo
from shopfeed.platform.search import Outcome, SearchIndex, SearchWriteFailed, Upsert, Write
from shopfeed.platform.search.projection import Projection

Pages = Callable[[], Iterable[Sequence[dynamo.Item]]]
"""Reads the table from the start, one page of items of the projection's type at a time."""


@dataclass
class Pace:
    """At most ``items_per_second`` read and written, on average over the run: after each page the job
    sleeps as long as that page was early. ``sleep`` and ``clock`` are swappable for tests."""

    items_per_second: float
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    slept: list[float] = field(default_factory=list)
    _started: float | None = None
    _done: int = 0

    def after(self, items: int) -> None:
        now = self.clock()
        if self._started is None:
            self._started = now - items / self.items_per_second
        self._done += items
        due = self._started + self._done / self.items_per_second
        if due > now:
            self.slept.append(due - now)
            self.sleep(due - now)


@dataclass
class RebuildReport:
    index: str
    dropped: list[str]
    indexed: int = 0
    caught_up: int = 0  # documents the second pass found newer in the table
    failures: dict[str, str] = field(default_factory=dict)  # document id → why it could not be indexed


def rebuild(projection: Projection, index: SearchIndex, pages: Pages, pace: Pace, stamp: str) -> RebuildReport:
    """Rebuild ``projection``'s index from ``pages``; ``stamp`` names the new index (a UTC time)."""
    spec = projection.spec
    name = f"{spec.physical}-{stamp}"
    index.create_index(spec, name)
    report = RebuildReport(name, [])
    for page in pages():
        # A stale answer in a fresh index means a retried bulk request had landed: indexed all the same.
        report.indexed += _apply(page, projection, lambda writes: index.fill(name, writes), report, count_stale=True)
        pace.after(len(page))
    report.dropped = index.move_alias(spec, name)
    for page in pages():
        report.caught_up += _apply(page, projection, lambda writes: index.write(spec, writes), report)
        pace.after(len(page))
    index.refresh(spec)
    return report


def _apply(
    page: Sequence[dynamo.Item],
    projection: Projection,
    write: Callable[[Sequence[Write]], list[Outcome | SearchWriteFailed]],
    report: RebuildReport,
    count_stale: bool = False,
) -> int:
    """Index one page; the number of documents written (or found written, with ``count_stale``).
    An item that cannot be indexed is reported and skipped: one bad item must not stop a rebuild."""
    writes: list[Write] = []
    for item in page:
        try:
            doc_id, body = projection.document(item)
            writes.append(Upsert(doc_id, projection.version(item), body))
        except (KeyError, ValueError) as error:
            report.failures[str(item.get("PK"))] = repr(error)
    written = 0
    for done, outcome in zip(writes, write(writes), strict=True):
        if isinstance(outcome, SearchWriteFailed):
            report.failures[done.doc_id] = str(outcome)
        elif outcome is Outcome.APPLIED or count_stale:
            written += 1
    return written
