"""Search sync: table changes (stream records) → index writes that never regress a document.

A ``Projection`` says how an item becomes a document; ``sync`` turns a batch of changes into writes
versioned by the item's ``version`` (see ``platform.search`` for the guarantees) and answers which
records failed, for the stream consumer's partial batch response.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shopfeed.platform import dynamo
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.search import (
    Outcome,
    Remove,
    SearchIndex,
    SearchMapping,
    SearchUnavailable,
    SearchWriteFailed,
    Upsert,
    Write,
)
from shopfeed.platform.streams import ChangeKind, Failures, ItemChange


@dataclass(frozen=True)
class Projection:
    """How the items of one record type are indexed.

    ``document`` maps an item to the document's id and body (raising KeyError or ValueError for an item
    that can never be indexed); ``id_of`` finds the id in any image, a REMOVE's old one included.
    Only versioned changes reach the index: a MODIFY that leaves ``version`` as it was (a stock
    decrement, a counter) changed nothing a document holds.
    """

    spec: SearchMapping
    document: Callable[[dynamo.Item], tuple[str, Mapping[str, Any]]]
    id_of: Callable[[dynamo.Item], str]
    version_attribute: str = "version"
    # How to read the version where the attribute alone will not do (items written before it existed).
    version_of: Callable[[dynamo.Item], int] | None = None

    def version(self, image: dynamo.Item) -> int:
        if self.version_of is not None:
            return self.version_of(image)
        return int(image[self.version_attribute])


@dataclass(frozen=True)
class SyncReport:
    applied: int
    stale: int
    skipped: int
    failures: Failures


def write_for(change: ItemChange, projection: Projection) -> Write | None:
    """The index write one change calls for, or None when it changes nothing indexed.
    Raises KeyError / ValueError for an image that cannot be indexed."""
    if change.kind is ChangeKind.REMOVE:
        removed = change.old_image or {}
        return Remove(projection.id_of(removed), projection.version(removed))
    new = change.new_image or {}
    old = change.old_image
    if change.kind is ChangeKind.MODIFY and old is not None and projection.version(old) == projection.version(new):
        return None
    doc_id, body = projection.document(new)
    return Upsert(doc_id, projection.version(new), body)


def sync(changes: Sequence[ItemChange], projection: Projection, index: SearchIndex) -> SyncReport:
    """Write every change of the batch to the index in one request; the records that failed, by
    sequence number. A stale write (the index holds that version or newer) is a success."""
    failures: Failures = {}
    pending: list[tuple[str, Write]] = []
    skipped = 0
    for change in changes:
        try:
            write = write_for(change, projection)
        except (KeyError, ValueError) as error:  # ValueError includes pydantic's ValidationError
            failures[change.sequence_number] = error
            continue
        if write is None:
            skipped += 1
        else:
            pending.append((change.sequence_number, write))
    try:
        outcomes = index.write(projection.spec, [write for _, write in pending])
    except SearchUnavailable as error:
        # Nothing got through: every record of the batch is retried (Lambda resumes at the first).
        failures.update({sequence_number: error for sequence_number, _ in pending})
        return SyncReport(0, 0, skipped, failures)
    applied = stale = 0
    for (sequence_number, _), outcome in zip(pending, outcomes, strict=True):
        if isinstance(outcome, SearchWriteFailed):
            failures[sequence_number] = outcome
        elif outcome is Outcome.APPLIED:
            applied += 1
        else:
            stale += 1
    return SyncReport(applied, stale, skipped, failures)


def sync_records(changes: Sequence[ItemChange], projection: Projection, index: SearchIndex | None) -> Failures:
    """A stream consumer's search handler: ``sync``, logged and counted; the failed records.

    A record the index refuses fails alone: it is retried, then parked in the mapping's DLQ, and a
    rebuild (``make reindex``) repairs the index once the cause is fixed. With no engine configured
    (``index`` None: search is off) every record is acknowledged and counted as skipped.
    """
    if index is None:
        metrics.add_metric(name="SearchSyncSkipped", unit="Count", value=len(changes))
        return {}
    report = sync(changes, projection, index)
    for sequence_number, error in report.failures.items():
        logger.warning(
            "search sync failed", index=projection.spec.alias, sequence_number=sequence_number, error=str(error)
        )
    metrics.add_metric(name="SearchDocumentsWritten", unit="Count", value=report.applied)
    metrics.add_metric(name="SearchSyncStale", unit="Count", value=report.stale)
    metrics.add_metric(name="SearchSyncFailed", unit="Count", value=len(report.failures))
    return report.failures
