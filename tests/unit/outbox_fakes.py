"""In-memory implementations of the outbox's ports (Outbox, EventPublisher), for unit tests.

tests/integration/test_outbox_relay.py runs the same scenarios against these and the moto-backed
OutboxRepository and EventBridgePublisher, so the fakes cannot drift from the real adapters.
"""

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shopfeed.platform.clock import iso
from shopfeed.platform.outbox import OutboxEvent
from shopfeed.platform.outbox_relay import UnreadableEvent
from shopfeed.platform.publisher import (
    EventBusUnavailable,
    EventNotPublished,
    IntegrationEvent,
    PublishReport,
    envelope,
)


@dataclass
class _Stored:
    event: OutboxEvent | UnreadableEvent
    occurred_at: str
    published_at: str | None = None


class InMemoryOutbox:
    """The ``Outbox`` port in memory, with OutboxRepository's observable semantics: marking is
    idempotent and keeps the first publication time, and a missing event cannot be marked."""

    def __init__(self, events: Iterable[OutboxEvent] = ()) -> None:
        self._items: dict[str, _Stored] = {}
        for event in events:
            self.add(event)

    def add(self, event: OutboxEvent) -> None:
        """An event written with its change, not yet published (as place_order leaves it)."""
        self._items[event.event_id] = _Stored(event, event.occurred_at)

    def add_unreadable(self, event_id: str, occurred_at: str) -> None:
        """An unpublished outbox item that no longer maps to an OutboxEvent."""
        self._items[event_id] = _Stored(UnreadableEvent(event_id, "missing detail"), occurred_at)

    def published_at(self, event_id: str) -> str | None:
        return self._items[event_id].published_at

    def unpublished(self) -> list[str]:
        return sorted(event_id for event_id, stored in self._items.items() if stored.published_at is None)

    def mark_published(self, event_ids: Sequence[str], now: datetime) -> set[str]:
        marked: set[str] = set()
        for event_id in event_ids:
            stored = self._items.get(event_id)
            if stored is not None:
                stored.published_at = stored.published_at or iso(now)
                marked.add(event_id)
        return marked

    def published(self, event_ids: Sequence[str]) -> set[str]:
        return {e for e in event_ids if e in self._items and self._items[e].published_at is not None}

    def list_unpublished(self, occurred_before: datetime) -> Iterator[OutboxEvent | UnreadableEvent]:
        bound = iso(occurred_before)
        waiting = [stored for stored in self._items.values() if stored.published_at is None]
        for stored in sorted(waiting, key=lambda s: (s.occurred_at, s.event.event_id)):
            if stored.occurred_at < bound:
                yield stored.event


@dataclass
class InMemoryBus:
    """The ``EventPublisher`` port in memory. Events are published as their envelope (what subscribers
    receive), except those the test had the bus refuse: ``refuse`` ids are refused on each attempt,
    as EventBridge reports a refused entry (the call succeeds, the entry carries an error code)."""

    refuse: set[str] = field(default_factory=set)
    delivered: list[dict[str, Any]] = field(default_factory=list)
    calls: list[list[str]] = field(default_factory=list)

    def publish(self, events: Sequence[IntegrationEvent]) -> PublishReport:
        self.calls.append([event.event_id for event in events])
        published: list[str] = []
        failures: dict[str, EventNotPublished] = {}
        for event in events:
            if event.event_id in self.refuse:
                failures[event.event_id] = EventNotPublished(event.event_id, "InternalFailure", "refused")
            else:
                self.delivered.append(envelope(event))
                published.append(event.event_id)
        return PublishReport(published=tuple(published), failures=failures)

    def delivered_ids(self) -> list[str]:
        return [str(event["metadata"]["event_id"]) for event in self.delivered]


class UnreachableBus:
    """An ``EventPublisher`` whose every call fails as a whole (the bus unreachable)."""

    def __init__(self) -> None:
        self.calls = 0

    def publish(self, events: Sequence[IntegrationEvent]) -> PublishReport:
        self.calls += 1
        raise EventBusUnavailable("shopfeed-test")
