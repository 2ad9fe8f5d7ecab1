"""The transactional outbox, its relay side: relaying a context's integration events to the bus, and
re-driving the ones left behind. The write side (``OutboxEvent``, ``OutboxKeys``) is ``outbox``.

An outbox item is written in the same transaction as the change it reports, and sits in a sparse
"unpublished" index until it is marked published. The stream consumer relays each new item
(``relay_records``); whatever the stream could not publish before giving up, or before its 24 h
retention ended, the scheduled sweeper finds in the index and publishes again (``sweep``). Nothing
is lost; an event may be published more than once, always under its own event id.
"""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import batched
from typing import Any, Final, Protocol

from boto3.dynamodb.conditions import Attr

from shopfeed.platform import dynamo, exactly_once, streams
from shopfeed.platform.clock import epoch_seconds, iso
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.outbox import OutboxEvent, OutboxKeys, event_from
from shopfeed.platform.publisher import EventNotPublished, EventPublisher, PublishReport

# The sweeper publishes and marks in pages, so a large backlog is never held in memory at once.
SWEEP_PAGE: Final = 100
UNREADABLE: Final = "UnreadableOutboxItem"
# BatchGetItem reads at most 100 keys per call.
_READ_PAGE: Final = 100


@dataclass(frozen=True)
class UnreadableEvent:
    """An unpublished outbox item that does not map to an OutboxEvent (edited by hand, or written by a
    version with another shape). It stays in the index, visible to operators, and is never published."""

    event_id: str
    reason: str


class Outbox(Protocol):
    """The outbox's storage port (OutboxRepository, or an in-memory fake in unit tests)."""

    def mark_published(self, event_ids: Sequence[str], now: datetime) -> set[str]:
        """Record that the events reached the bus and take them out of the unpublished index; the
        ids marked. Idempotent (a second mark keeps the first ``published_at``); an id without an
        outbox item (TTL removed it) is left out, never created."""
        ...

    def published(self, event_ids: Sequence[str]) -> set[str]:
        """Which of ``event_ids`` are already marked published."""
        ...

    def list_unpublished(self, occurred_before: datetime) -> Iterator[OutboxEvent | UnreadableEvent]:
        """Every event still unpublished that occurred before ``occurred_before``."""
        ...


class OutboxRepository:
    """The outbox items of one table: every DynamoDB call of the outbox."""

    def __init__(self, table: dynamo.Table, keys: OutboxKeys, retention: timedelta) -> None:
        self._table = table
        self._keys = keys
        self._retention = retention

    def mark_published(self, event_ids: Sequence[str], now: datetime) -> set[str]:
        """One TransactWriteItems per 100 events: the fewest round trips DynamoDB allows for
        conditional updates (BatchWriteItem only puts whole items, which would resurrect an item TTL
        removed). An item gone meanwhile cancels the transaction; it is retried without it."""
        marked: set[str] = set()
        for chunk in batched(dict.fromkeys(event_ids), dynamo.MAX_TRANSACTION_ITEMS, strict=False):
            remaining = list(chunk)
            while remaining:
                try:
                    self._table.transact(self._marks(remaining, now), busy="the outbox")
                except dynamo.TransactionCancelled as cancelled:
                    gone = set(cancelled.failed_labels())
                    if not gone:
                        raise
                    remaining = [event_id for event_id in remaining if event_id not in gone]
                    continue
                marked.update(remaining)
                break
        return marked

    def _marks(self, event_ids: Sequence[str], now: datetime) -> dynamo.Transaction:
        index = self._keys.unpublished
        mark = dynamo.Update(
            set_if_absent={"published_at": iso(now), "expires_at": epoch_seconds(now + self._retention)},
            remove=[index.partition_key, index.sort_key],
        )
        transaction = dynamo.Transaction()
        for event_id in event_ids:
            # The condition keeps a late or repeated mark from creating an item TTL already removed.
            op = self._table.update_op(self._keys.item_key(event_id), mark, condition=Attr(dynamo.PARTITION).exists())
            transaction.add(event_id, op)
        return transaction

    def published(self, event_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for chunk in batched(dict.fromkeys(event_ids), _READ_PAGE, strict=False):
            items = self._table.get_many(
                [self._keys.item_key(event_id) for event_id in chunk], ["event_id", "published_at"]
            )
            found.update(str(item["event_id"]) for item in items if "published_at" in item)
        return found

    def list_unpublished(self, occurred_before: datetime) -> Iterator[OutboxEvent | UnreadableEvent]:
        """One paginated Query per write shard of the unpublished index, oldest first within a shard.

        The index is eventually consistent: an event published a moment ago may still be listed, and
        publishing it again is harmless.
        """
        bound = iso(occurred_before)
        for partition in self._keys.partitions:
            start: Mapping[str, Any] | None = None
            while True:
                response = self._table.query(
                    self._keys.unpublished, partition, where=lambda sk: sk.lt(bound), start=start
                )
                for raw in response["Items"]:
                    yield self._event_or_unreadable(dynamo.deserialize(raw))
                start = response.get("LastEvaluatedKey")
                if not start:
                    break

    def _event_or_unreadable(self, item: dynamo.Item) -> OutboxEvent | UnreadableEvent:
        try:
            return event_from(item)
        except (KeyError, ValueError) as error:  # ValueError includes pydantic's ValidationError
            return UnreadableEvent(event_id=self._keys.event_id_of(item[dynamo.PARTITION]), reason=repr(error))


# -- use cases -----------------------------------------------------------------------------------


def relay(events: Sequence[OutboxEvent], publisher: EventPublisher, outbox: Outbox, now: datetime) -> PublishReport:
    """Publish ``events`` and mark the ones the bus accepted as published, in one batch.

    Refused events stay unpublished and are reported, so the caller can fail just their stream
    records. A publish call that fails as a whole raises EventBusUnavailable before anything is
    marked, and a mark that fails (DynamoDB unreachable after the SDK's retries) raises botocore's
    error: either way the events are published again later under the same ids, which subscribers
    already have to tolerate. A mark that finds no item (TTL removed it) is harmless and ignored.
    """
    if not events:
        return PublishReport()
    report = publisher.publish(events)
    if report.published:
        outbox.mark_published(report.published, now)
    return report


def relay_records(
    changes: Sequence[streams.ItemChange], publisher: EventPublisher, outbox: Outbox, now: datetime
) -> streams.Failures:
    """The outbox's stream record handler: new outbox items → the bus. An event the bus refused
    fails only its own record; a record delivered again whose event is already marked published is
    acknowledged without publishing it again (``exactly_once.skip_applied``)."""

    def already_published(inserted: Sequence[streams.ItemChange]) -> set[str]:
        ids = {change.sequence_number: str((change.image or {}).get("event_id")) for change in inserted}
        done = outbox.published(list(ids.values()))
        return {sequence_number for sequence_number, event_id in ids.items() if event_id in done}

    def publish(inserted: Sequence[streams.ItemChange]) -> streams.Failures:
        events, failures = streams.parse_images(inserted, event_from)
        report = relay(list(events.values()), publisher, outbox, now)
        for sequence_number, event in events.items():
            if refused := report.failures.get(event.event_id):
                failures[sequence_number] = refused
        for sequence_number, error in failures.items():
            logger.warning("outbox event not published", sequence_number=sequence_number, error=str(error))
        metrics.add_metric(name="OutboxEventPublished", unit="Count", value=len(report.published))
        metrics.add_metric(name="OutboxPublishFailed", unit="Count", value=len(failures))
        return failures

    # A MODIFY is this relay marking the item published, a REMOVE is TTL: only INSERTs are news.
    inserted = [change for change in changes if change.kind is streams.ChangeKind.INSERT]
    return dict(exactly_once.skip_applied(publish, already_published)(inserted))


@dataclass(frozen=True)
class SweepReport:
    """What a sweep found unpublished and what became of it."""

    found: int = 0
    published: tuple[str, ...] = ()
    failures: dict[str, EventNotPublished] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        return {"found": self.found, "published": len(self.published), "failed": len(self.failures)}


def sweep(
    publisher: EventPublisher, outbox: Outbox, now: datetime, unpublished_for: timedelta, page: int = SWEEP_PAGE
) -> SweepReport:
    """Re-publish every event that occurred more than ``unpublished_for`` ago and is still unpublished.

    The stream relay normally publishes within seconds; what is left behind is what its retries gave
    up on (or what outlived the stream's 24 h retention). Unreadable items are reported as failures.
    """
    found = 0
    published: list[str] = []
    failures: dict[str, EventNotPublished] = {}
    for chunk in batched(outbox.list_unpublished(now - unpublished_for), page, strict=False):
        found += len(chunk)
        events = [entry for entry in chunk if isinstance(entry, OutboxEvent)]
        for unreadable in _unreadable(chunk):
            failures[unreadable.event_id] = EventNotPublished(unreadable.event_id, UNREADABLE, unreadable.reason)
        report = relay(events, publisher, outbox, now)
        published += report.published
        failures.update(report.failures)
    return SweepReport(found=found, published=tuple(published), failures=failures)


def _unreadable(entries: Iterable[OutboxEvent | UnreadableEvent]) -> Iterator[UnreadableEvent]:
    return (entry for entry in entries if isinstance(entry, UnreadableEvent))


def record_sweep(report: SweepReport) -> dict[str, int]:
    """Log and count a sweep's outcome (the sweeper function's answer)."""
    for failure in report.failures.values():
        logger.warning("outbox event still unpublished", event_id=failure.event_id, code=failure.code)
    metrics.add_metric(name="OutboxEventRedriven", unit="Count", value=len(report.published))
    metrics.add_metric(name="OutboxPublishFailed", unit="Count", value=len(report.failures))
    logger.info("outbox swept", extra=report.counts)
    return report.counts
