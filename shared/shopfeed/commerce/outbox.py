"""The commerce outbox: relaying integration events to the bus, and re-driving the ones left behind.

An outbox item is written in the same transaction as the change it reports, and sits in the sparse
UnpublishedOutbox index until it is marked published. The stream consumer relays each new item
(``relay``); whatever the stream could not publish before giving up, or before its 24 h retention
ended, the scheduled sweeper finds in the index and publishes again (``sweep``). Nothing is lost;
an event may be published more than once, always under its own event id.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import batched
from typing import TYPE_CHECKING, Final, Protocol

from botocore.exceptions import ClientError

from shopfeed.commerce import items, keys
from shopfeed.commerce.models import OutboxEvent
from shopfeed.commerce.settings import CommerceStreamSettings, CommerceSweeperSettings
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import epoch_seconds, iso
from shopfeed.platform.publisher import (
    EventBridgePublisher,
    EventNotPublished,
    EventPublisher,
    PublishReport,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# The sweeper publishes and marks in pages, so a large backlog is never held in memory at once.
SWEEP_PAGE: Final = 100
UNREADABLE: Final = "UnreadableOutboxItem"


@dataclass(frozen=True)
class UnreadableEvent:
    """An unpublished outbox item that does not map to an OutboxEvent (edited by hand, or written by a
    version with another shape). It stays in the index, visible to operators, and is never published."""

    event_id: str
    reason: str


class Outbox(Protocol):
    """The outbox's storage port (OutboxRepository, or an in-memory fake in unit tests)."""

    def mark_published(self, event_id: str, now: datetime) -> bool:
        """Record that the event reached the bus and take it out of UnpublishedOutbox. Idempotent
        (a second mark keeps the first ``published_at``); False if there is no such outbox item."""
        ...

    def list_unpublished(self, occurred_before: datetime) -> Iterator[OutboxEvent | UnreadableEvent]:
        """Every event still unpublished that occurred before ``occurred_before``."""
        ...


class OutboxRepository:
    """The outbox items of CommerceTable: every DynamoDB call of the outbox aggregate."""

    def __init__(self, client: "DynamoDBClient", table: str, retention: timedelta) -> None:
        self._client = client
        self._table = table
        self._retention = retention

    def mark_published(self, event_id: str, now: datetime) -> bool:
        # UpdateItem would create a missing item: the condition keeps a late or repeated mark from
        # resurrecting an outbox item that TTL already removed.
        try:
            self._client.update_item(
                TableName=self._table,
                Key=dynamo.serialize(keys.outbox(event_id)),
                UpdateExpression=(
                    "SET published_at = if_not_exists(published_at, :now),"
                    " expires_at = if_not_exists(expires_at, :expires)"
                    " REMOVE unpublished_pk, unpublished_sk"
                ),
                ConditionExpression="attribute_exists(PK)",
                ExpressionAttributeValues={
                    ":now": dynamo.value(iso(now)),
                    ":expires": dynamo.value(epoch_seconds(now + self._retention)),
                },
            )
        except ClientError as error:
            if dynamo.is_conditional_failure(error):
                return False
            raise
        return True

    def list_unpublished(self, occurred_before: datetime) -> Iterator[OutboxEvent | UnreadableEvent]:
        """One paginated Query per write shard of UnpublishedOutbox, oldest first within a shard.

        The index is eventually consistent: an event published a moment ago may still be listed, and
        publishing it again is harmless.
        """
        paginator = self._client.get_paginator("query")
        for shard in range(keys.OUTBOX_SHARDS):
            pages = paginator.paginate(
                TableName=self._table,
                IndexName=str(keys.UNPUBLISHED_OUTBOX.name),
                KeyConditionExpression="unpublished_pk = :pk AND unpublished_sk < :before",
                ExpressionAttributeValues={
                    ":pk": dynamo.value(keys.unpublished_partition(shard)),
                    ":before": dynamo.value(keys.unpublished_before(iso(occurred_before))),
                },
            )
            for page in pages:
                for raw in page["Items"]:
                    yield _event_or_unreadable(dynamo.deserialize(raw))


def _event_or_unreadable(item: dynamo.Item) -> OutboxEvent | UnreadableEvent:
    try:
        return items.outbox_event_from(item)
    except (KeyError, ValueError) as error:  # ValueError includes pydantic's ValidationError
        return UnreadableEvent(event_id=keys.parse_event_id(item["PK"]), reason=repr(error))


# -- use cases -----------------------------------------------------------------------------------


def relay(events: Sequence[OutboxEvent], publisher: EventPublisher, outbox: Outbox, now: datetime) -> PublishReport:
    """Publish ``events`` and mark each one the bus accepted as published.

    Refused events stay unpublished and are reported, so the caller can fail just their stream
    records. A publish call that fails as a whole raises EventBusUnavailable before anything is
    marked, and a mark that fails (DynamoDB unreachable after the SDK's retries) raises botocore's
    error: either way the events are published again later under the same ids, which subscribers
    already have to tolerate. A mark that finds no item (TTL removed it) is harmless and ignored.
    """
    if not events:
        return PublishReport()
    report = publisher.publish(events)
    for event_id in report.published:
        outbox.mark_published(event_id, now)
    return report


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
        for unreadable in (entry for entry in chunk if isinstance(entry, UnreadableEvent)):
            failures[unreadable.event_id] = EventNotPublished(unreadable.event_id, UNREADABLE, unreadable.reason)
        report = relay(events, publisher, outbox, now)
        published += report.published
        failures.update(report.failures)
    return SweepReport(found=found, published=tuple(published), failures=failures)


def ports(config: CommerceStreamSettings | CommerceSweeperSettings) -> tuple[EventBridgePublisher, OutboxRepository]:
    """The bus and the outbox store as the relay and the sweeper use them in AWS. Cheap to call per
    batch: the clients are made once per container by their factories."""
    return (
        EventBridgePublisher(clients.eventbridge(), config.event_bus_name),
        OutboxRepository(clients.dynamodb(), config.commerce_table_name, timedelta(days=config.outbox_retention_days)),
    )
