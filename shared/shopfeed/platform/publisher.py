"""Integration events out: the EventPublisher port and its EventBridge adapter.

Every event reaches the bus with this ``Detail`` (the envelope subscribers rely on)::

    {
      "metadata": {"event_id": "01JD...", "event_type": "OrderPlaced",
                   "occurred_at": "2026-11-22T10:00:00.000Z", "aggregate_id": "01JD..."},
      "data": {...the event's detail, exactly as the outbox stored it...}
    }

``Source`` is the producing context (``shopfeed.<context>``), ``DetailType`` the event type and
``Time`` the moment it occurred. EventBridge gives every PutEvents entry a fresh ``id``, so an event
published twice (a stream retry, the sweeper) arrives as two events: subscribers deduplicate on
``detail.metadata.event_id``, the outbox event's id, which never changes.
"""

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from shopfeed.platform.observability import trace_header

if TYPE_CHECKING:
    from mypy_boto3_events import EventBridgeClient
    from mypy_boto3_events.type_defs import PutEventsRequestEntryTypeDef

# PutEvents quotas: at most 10 entries and 256 KiB per request, sizes counted as the EventBridge
# user guide's "Calculating PutEvents event entry size" describes.
MAX_ENTRIES: Final = 10
MAX_REQUEST_BYTES: Final = 256 * 1024
_TIME_BYTES: Final = 14

# Codes of events the adapter refuses before sending (EventBridge's own codes pass through as given).
ENTRY_TOO_LARGE: Final = "EntryTooLarge"
UNPUBLISHABLE: Final = "UnpublishableEvent"


class IntegrationEvent(Protocol):
    """What a publisher needs of an event (a context's outbox event model has these fields)."""

    @property
    def event_id(self) -> str: ...
    @property
    def event_type(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def aggregate_id(self) -> str: ...
    @property
    def occurred_at(self) -> str: ...
    @property
    def detail(self) -> Mapping[str, Any]: ...


class EventNotPublished(Exception):
    """The bus (or the adapter, before sending) refused one event: it stays unpublished."""

    def __init__(self, event_id: str, code: str, message: str) -> None:
        super().__init__(f"event {event_id} was not published: {code}: {message}")
        self.event_id, self.code, self.message = event_id, code, message


class EventBusUnavailable(Exception):
    """A publish call failed as a whole (no answer after the SDK's retries, no permission): no event
    of that call is known to be published."""

    def __init__(self, bus: str) -> None:
        super().__init__(f"event bus {bus} did not accept the call")
        self.bus = bus


@dataclass(frozen=True)
class PublishReport:
    """Per event: published (by id, in order) or refused (by id, with why)."""

    published: tuple[str, ...] = ()
    failures: Mapping[str, EventNotPublished] = field(default_factory=dict)


class EventPublisher(Protocol):
    """Publishes integration events to subscribers and says, event by event, which were accepted."""

    def publish(self, events: Sequence[IntegrationEvent]) -> PublishReport:
        """Publish ``events``. Refused events are reported, never raised: one bad event must not
        hold back the others. Raises EventBusUnavailable when a call fails as a whole."""
        ...


def envelope(event: IntegrationEvent) -> dict[str, Any]:
    """The ``Detail`` document of ``event`` (see the module docstring)."""
    return {
        "metadata": {
            "event_id": event.event_id,
            "event_type": event.event_type,
            "occurred_at": event.occurred_at,
            "aggregate_id": event.aggregate_id,
        },
        "data": event.detail,
    }


@dataclass(frozen=True)
class _Entry:
    event_id: str
    request: "PutEventsRequestEntryTypeDef"
    size: int


class EventBridgePublisher:
    """EventPublisher on an EventBridge bus: PutEvents in requests within its entry and size quotas."""

    def __init__(
        self, client: "EventBridgeClient", bus_name: str, trace_header: Callable[[], str | None] = trace_header
    ) -> None:
        self._client = client
        self._bus = bus_name
        self._trace_header = trace_header

    def publish(self, events: Sequence[IntegrationEvent]) -> PublishReport:
        published: list[str] = []
        failures: dict[str, EventNotPublished] = {}
        entries: list[_Entry] = []
        trace = self._trace_header()
        for event in events:
            try:
                entries.append(self._entry(event, trace))
            except EventNotPublished as refused:
                failures[event.event_id] = refused
        for chunk in _chunks(entries):
            try:
                response = self._client.put_events(Entries=[entry.request for entry in chunk])
            except (ClientError, BotoCoreError) as error:
                raise EventBusUnavailable(self._bus) from error
            if response["FailedEntryCount"] == 0:
                published += [entry.event_id for entry in chunk]
                continue
            # Results are positional: the n-th result answers the n-th entry of the request.
            for entry, result in zip(chunk, response["Entries"], strict=True):
                if "ErrorCode" in result:
                    failures[entry.event_id] = EventNotPublished(
                        entry.event_id, result["ErrorCode"], result.get("ErrorMessage", "")
                    )
                else:
                    published.append(entry.event_id)
        return PublishReport(published=tuple(published), failures=failures)

    def _entry(self, event: IntegrationEvent, trace: str | None) -> _Entry:
        try:
            detail = json.dumps(envelope(event), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
            occurred = datetime.fromisoformat(event.occurred_at)
        except (TypeError, ValueError) as error:  # a set or bytes in the detail, a bad timestamp
            raise EventNotPublished(event.event_id, UNPUBLISHABLE, str(error)) from error
        size = _TIME_BYTES + sum(len(text.encode()) for text in (event.source, event.event_type, detail))
        if size > MAX_REQUEST_BYTES:
            raise EventNotPublished(
                event.event_id, ENTRY_TOO_LARGE, f"{size} bytes; PutEvents takes {MAX_REQUEST_BYTES}"
            )
        request: PutEventsRequestEntryTypeDef = {
            "EventBusName": self._bus,
            "Source": event.source,
            "DetailType": event.event_type,
            "Detail": detail,
            "Time": occurred,
        }
        if trace:
            # Subscribers' invocations then join the trace of the change that produced the event.
            request["TraceHeader"] = trace
        return _Entry(event.event_id, request, size)


def _chunks(entries: Sequence[_Entry]) -> Iterator[list[_Entry]]:
    chunk: list[_Entry] = []
    size = 0
    for entry in entries:
        if chunk and (len(chunk) == MAX_ENTRIES or size + entry.size > MAX_REQUEST_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(entry)
        size += entry.size
    if chunk:
        yield chunk
