"""Search sync: table changes (stream records) → index writes that never regress a document, through a
queue of their own, so that an engine outage holds nothing but the index.

A ``Projection`` says how an item becomes a document. A stream consumer's search handler
(``queue_writes``) turns each change into its versioned write (``write_for``) and puts it on the
search sync queue, one message per write (``IndexWrite``): the stream's batch waits on SQS, never on
the engine. The search sync worker (``apply_messages``) applies a batch of them, one bulk request per
index; a write the engine could not take stays on the queue and comes back later, later still each
time it fails (``BACKOFF``). Versions make the order and the number of deliveries irrelevant (see
``platform.search``): a stale write is a success.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSEvent
from pydantic import BaseModel, ConfigDict

from shopfeed.platform import clients, queues
from shopfeed.platform.config import SearchSyncSettings, settings
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.queues import Backoff, Redelivery, SqsTaskQueue, TaskQueue
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
from shopfeed.platform.search.projection import Projection
from shopfeed.platform.streams import ChangeKind, Failures, ItemChange

if TYPE_CHECKING:
    # Types only: Powertools' batch package imports its parser models (~45 ms), which an API never runs.
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse

# A write the engine could not take comes back 10 s later, then 20 s, 40 s ... and every 10 minutes
# from its seventh failure: an engine back from an outage is caught up within 10 minutes. The queue's
# maxReceiveCount (template.yaml) decides how long an outage a write outlives before its DLQ.
BACKOFF: Final = Backoff(base=10, cap=600)


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


class IndexWrite(BaseModel):
    """One index write as it waits on the search sync queue: the index (its alias) it goes to, and the
    write. A write without a body is a tombstone (``Remove``)."""

    model_config = ConfigDict(frozen=True)

    index: str
    doc_id: str
    version: int
    body: dict[str, Any] | None = None

    @classmethod
    def of(cls, spec: SearchMapping, write: Write) -> "IndexWrite":
        body = dict(write.body) if isinstance(write, Upsert) else None
        return cls(index=spec.alias, doc_id=write.doc_id, version=write.version, body=body)

    def write(self) -> Write:
        if self.body is None:
            return Remove(self.doc_id, self.version)
        return Upsert(self.doc_id, self.version, self.body)


# -- the stream side ---------------------------------------------------------------------------------


def queue() -> SqsTaskQueue[IndexWrite] | None:
    """The search sync queue the function is given (``SEARCH_SYNC_QUEUE_URL``, for the composition
    roots), or None when the stack has no search."""
    url = settings(SearchSyncSettings).search_sync_queue_url
    return SqsTaskQueue(clients.sqs(), url) if url else None


def queue_writes(
    changes: Sequence[ItemChange], projection: Projection, writes: TaskQueue[IndexWrite] | None
) -> Failures:
    """A stream consumer's search handler: each change's versioned write queued for the search sync
    worker; the failed records. A change that cannot be indexed (a bad image) or a write SQS refuses
    fails its record alone; an engine outage fails none. With no queue (the stack has no search) every
    record is acknowledged and counted as skipped."""
    if writes is None:
        metrics.add_metric(name="SearchSyncSkipped", unit="Count", value=len(changes))
        return {}

    def queued(change: ItemChange) -> IndexWrite | None:
        write = write_for(change, projection)
        return IndexWrite.of(projection.spec, write) if write is not None else None

    return queues.enqueue(changes, queued, writes, metric="SearchWritesQueued", unqueued="search write not queued")


# -- the worker side ---------------------------------------------------------------------------------


class UnknownIndex(ValueError):
    """A queued write names an index the worker does not write (another release's, or a typo)."""


@dataclass(frozen=True)
class ApplyReport:
    applied: int
    stale: int
    failures: dict[str, Exception]  # why each failed message failed, by message id
    unavailable: int = 0  # how many of them failed because the engine was unavailable


def apply(bodies: Mapping[str, str], indexes: Mapping[str, SearchMapping], engine: SearchIndex) -> ApplyReport:
    """Apply queued writes (message bodies by message id), one bulk request per index, each write
    judged on its own; which messages failed. A stale write is a success: the index holds that version
    or a newer one. Once the engine is unavailable, the writes of the other indexes fail without
    asking it again (each request would wait out the same timeouts)."""
    failures: dict[str, Exception] = {}
    grouped: dict[str, list[tuple[str, Write]]] = {}
    for message_id, body in bodies.items():
        try:
            queued = IndexWrite.model_validate_json(body)  # a ValidationError is a ValueError
            if queued.index not in indexes:
                raise UnknownIndex(f"no index {queued.index!r} is written here")
        except ValueError as error:
            failures[message_id] = error
            continue
        grouped.setdefault(queued.index, []).append((message_id, queued.write()))
    applied = stale = unavailable = 0
    down: SearchUnavailable | None = None
    for alias, pending in grouped.items():
        outcomes = _bulk(engine, indexes[alias], [write for _, write in pending]) if down is None else down
        if isinstance(outcomes, SearchUnavailable):
            down = outcomes
            failures.update(dict.fromkeys((message_id for message_id, _ in pending), down))
            unavailable += len(pending)
            continue
        for (message_id, _), outcome in zip(pending, outcomes, strict=True):
            if isinstance(outcome, SearchWriteFailed):
                failures[message_id] = outcome
            elif outcome is Outcome.APPLIED:
                applied += 1
            else:
                stale += 1
    return ApplyReport(applied, stale, failures, unavailable)


def _bulk(
    engine: SearchIndex, spec: SearchMapping, writes: Sequence[Write]
) -> list[Outcome | SearchWriteFailed] | SearchUnavailable:
    try:
        return engine.write(spec, writes)
    except SearchUnavailable as error:
        return error


def apply_messages(
    event: Mapping[str, Any],
    indexes: Mapping[str, SearchMapping],
    engine: SearchIndex | None,
    redelivery: Redelivery,
    backoff: Backoff = BACKOFF,
) -> "PartialItemFailureResponse":
    """The search sync worker's whole handler: ``apply`` the batch, log and count it, and answer
    which messages failed, each held back on the queue by its receive count (``queues.retry_later``).
    With no engine configured (search is off) every message is acknowledged and counted as skipped."""
    records = list(SQSEvent(dict(event)).records)
    if engine is None:
        metrics.add_metric(name="SearchSyncSkipped", unit="Count", value=len(records))
        return {"batchItemFailures": []}
    report = apply({record.message_id: record.body for record in records}, indexes, engine)
    for message_id, error in report.failures.items():
        if not isinstance(error, SearchUnavailable):
            logger.warning("search write failed", message_id=message_id, error=str(error))
    if report.unavailable:
        # One line per batch: during an outage every message of every batch fails the same way.
        unavailable = next(e for e in report.failures.values() if isinstance(e, SearchUnavailable))
        logger.warning("search engine unavailable", messages=report.unavailable, error=str(unavailable))
    metrics.add_metric(name="SearchDocumentsWritten", unit="Count", value=report.applied)
    metrics.add_metric(name="SearchSyncStale", unit="Count", value=report.stale)
    metrics.add_metric(name="SearchSyncFailed", unit="Count", value=len(report.failures))
    return queues.retry_later(records, report.failures, redelivery, backoff)
