"""DynamoDB stream records, parsed once into typed values and routed by record type.

A consumer's ``app.py`` holds its routing table (record type → handler in the context package) and
hands the batch over::

    ROUTES = {items.OUTBOX_EVENT: on.relay_outbox_events}  # on: the context's consumers.<function> module

    def lambda_handler(event, context):
        return streams.handle_batch(event, ROUTES)

Each record type's handler gets all of its records of the batch at once (PutEvents takes ten
entries, counters aggregate a batch into one write per item) and answers which ones failed. A type
may have several handlers (a tuple: a post counts, fans out and is indexed), each given all of them. The
answer goes back to Lambda as a partial batch response: Lambda checkpoints before the first failed
record and delivers again from there, so every record after it, of every type, comes again. Handlers
must therefore be idempotent (see ``exactly_once``).

The response is built here from the handlers' answers. Powertools' BatchProcessor is not used: it
walks records one by one through a record handler, so a batch-wide handler would have to raise each
record's failure again just for the processor to catch it (the plain dict is what Lambda reads).

A handler that meets an AWS outage its SDK retries could not absorb (``platform.outages``) fails its
own records, not the invocation: the records come again as any failed record does, without a
function error (an alarm) or a bisection of the whole batch.

A REMOVE (a delete, or TTL expiry) has no new image: its handler reads the old one (``image``).
A record whose type has no route is logged and counted (``StreamRecordUnrouted``), then acknowledged:
the event source mapping's FilterCriteria should not have let it in (a template test keeps the two
equal), and failing it would hold back its shard until it aged out of the stream.
"""

import base64
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from botocore.exceptions import BotoCoreError, ClientError

from shopfeed.platform import dynamo, outages
from shopfeed.platform.errors import DependencyUnavailable
from shopfeed.platform.observability import logger, metrics

if TYPE_CHECKING:
    # Types only: Powertools' batch package imports its parser models (~45 ms), which an API never runs.
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse

ENTITY_TYPE = "entity_type"


class ChangeKind(StrEnum):
    INSERT = "INSERT"
    MODIFY = "MODIFY"
    REMOVE = "REMOVE"


class MalformedRecord(ValueError):
    """A record without what every DynamoDB stream record carries (sequence number, event name, keys)."""


@dataclass(frozen=True)
class ItemChange:
    """One stream record: which item changed and how, its images as plain Python values."""

    sequence_number: str
    kind: ChangeKind
    keys: dynamo.Item
    new_image: dynamo.Item | None
    old_image: dynamo.Item | None
    approximate_time: datetime

    @property
    def image(self) -> dynamo.Item | None:
        """The item as the change left it, or as it was before a REMOVE (which has no new image)."""
        return self.new_image if self.new_image is not None else self.old_image

    @property
    def entity_type(self) -> str | None:
        """The record type: ``entity_type`` of the new image, or of the old one for a REMOVE."""
        value = (self.image or {}).get(ENTITY_TYPE)
        return str(value) if value is not None else None


def parse(record: DynamoDBRecord) -> ItemChange:
    """The typed change of a Lambda-shaped record (epoch-seconds timestamp, images in DynamoDB JSON).

    Images go through ``dynamo.deserialize`` (integral numbers become int), as repositories read them.
    Raises MalformedRecord.
    """
    stream = record.dynamodb
    sequence_number = stream.sequence_number if stream is not None else None
    if stream is None or sequence_number is None or "eventName" not in record.raw_event:
        raise MalformedRecord("a stream record carries eventName, dynamodb and dynamodb.SequenceNumber")
    images = stream.raw_event
    try:
        kind = ChangeKind(record.raw_event["eventName"])
        keys = _image(images["Keys"])
        new_image = _image(images["NewImage"]) if "NewImage" in images else None
        old_image = _image(images["OldImage"]) if "OldImage" in images else None
        seconds = stream.approximate_creation_date_time
    except (KeyError, TypeError, ValueError) as error:
        raise MalformedRecord(f"stream record {sequence_number} is malformed: {error!r}") from error
    if seconds is None:
        raise MalformedRecord(f"stream record {sequence_number} has no ApproximateCreationDateTime")
    return ItemChange(sequence_number, kind, keys, new_image, old_image, datetime.fromtimestamp(seconds, UTC))


def _image(raw: Mapping[str, Any]) -> dynamo.Item:
    return dynamo.deserialize({name: _from_event_json(value) for name, value in raw.items()})


def _from_event_json(value: Mapping[str, Any]) -> dict[str, Any]:
    """An attribute value as Lambda's event JSON carries it, made what boto3's deserializer takes:
    binary values arrive base64-encoded (``{"B": "AAEC"}``), at any depth."""
    ((kind, content),) = value.items()
    match kind:
        case "B":
            return {"B": base64.b64decode(content)}
        case "BS":
            return {"BS": [base64.b64decode(item) for item in content]}
        case "M":
            return {"M": {name: _from_event_json(item) for name, item in content.items()}}
        case "L":
            return {"L": [_from_event_json(item) for item in content]}
    return dict(value)


Failures = dict[str, Exception]
"""Why records failed, by sequence number."""

RecordTypeHandler = Callable[[Sequence[ItemChange]], Mapping[str, Exception]]
"""Handles every record of one type in a batch at once; returns the failed ones by sequence number.

Raising fails the whole invocation (Lambda retries the batch, bisecting it): do that only for an
outage that no record can get past, never for one bad record.
"""


def made_of[T](changes: Iterable[ItemChange], rule: Callable[[ItemChange], T | None]) -> tuple[dict[str, T], Failures]:
    """What ``rule`` makes of each change, by sequence number (a change it answers None for makes
    nothing), and the changes it could not read (a KeyError or ValueError, which includes pydantic's
    ValidationError): those fail on their own."""
    made: dict[str, T] = {}
    failures: Failures = {}
    for change in changes:
        try:
            value = rule(change)
        except (KeyError, ValueError) as error:
            failures[change.sequence_number] = error
            continue
        if value is not None:
            made[change.sequence_number] = value
    return made, failures


def parse_images[T](changes: Iterable[ItemChange], model: Callable[[dynamo.Item], T]) -> tuple[dict[str, T], Failures]:
    """Each change's image (the old one for a REMOVE) mapped by ``model``, by sequence number, and
    the images it refused: those fail on their own."""
    return made_of(changes, lambda change: model(change.image or {}))


Route = RecordTypeHandler | tuple[RecordTypeHandler, ...]
"""What a routing table maps a record type to: its handler, or its handlers (each gets every record)."""

UNROUTED_METRIC: Final = "StreamRecordUnrouted"


@dataclass(frozen=True)
class BatchOutcome:
    """Which records of a batch failed, by sequence number (None: a record without one), in the
    order of the batch."""

    failures: Mapping[str | None, Exception]

    def response(self) -> "PartialItemFailureResponse":
        """The partial batch response Lambda reads (``ReportBatchItemFailures``)."""
        return {"batchItemFailures": [{"itemIdentifier": key or ""} for key in self.failures]}


def _sequence_number(raw: Mapping[str, Any]) -> str | None:
    value = (raw.get("dynamodb") or {}).get("SequenceNumber")
    return str(value) if value is not None else None


def handlers_of(route: Route) -> tuple[RecordTypeHandler, ...]:
    return route if isinstance(route, tuple) else (route,)


def route(records: Iterable[Mapping[str, Any]], routes: Mapping[str, Route]) -> BatchOutcome:
    """Parse every record, hand each record type's records to its handler, collect the failures.

    A record that does not parse fails on its own. A record of a type without a route is logged and
    counted, then acknowledged (see the module docstring). A handler routed for several types gets all
    of their records in one call, in batch order: a counter fed by two record types (posts and follows
    both count on a profile) still writes each target once per batch.
    """
    order: list[str | None] = []
    failures: dict[str | None, Exception] = {}
    by_handler: dict[RecordTypeHandler, list[ItemChange]] = {}
    unrouted = 0
    for raw in records:
        order.append(_sequence_number(raw))
        try:
            change = parse(DynamoDBRecord(dict(raw)))
        except MalformedRecord as error:
            failures[_sequence_number(raw)] = error
            continue
        entity_type = change.entity_type
        if entity_type is not None and entity_type in routes:
            for handler in handlers_of(routes[entity_type]):
                by_handler.setdefault(handler, []).append(change)
            continue
        unrouted += 1
        logger.error(
            "stream record has no handler",
            entity_type=entity_type,
            change=change.kind.value,
            sequence_number=change.sequence_number,
        )
    if unrouted:
        metrics.add_metric(name=UNROUTED_METRIC, unit="Count", value=unrouted)
    for handler, changes in by_handler.items():
        # A record two handlers failed is retried once: the first reason is kept.
        failures.update({key: error for key, error in _run(handler, changes).items() if key not in failures})
    return BatchOutcome({key: failures[key] for key in order if key in failures})


def _run(handler: RecordTypeHandler, changes: Sequence[ItemChange]) -> Mapping[str, Exception]:
    """The handler's failures; all of its records when an AWS outage stopped it (see the module
    docstring). Any other exception is a bug: it fails the invocation, with its trace."""
    try:
        return handler(changes)
    except (ClientError, BotoCoreError, DependencyUnavailable) as error:
        if not isinstance(error, DependencyUnavailable) and outages.unavailable(error) is None:
            raise
        logger.warning("records failed: a dependency is unavailable", records=len(changes), error=str(error))
        return dict.fromkeys((change.sequence_number for change in changes), error)


def handle_batch(event: Mapping[str, Any], routes: Mapping[str, Route]) -> "PartialItemFailureResponse":
    """A stream consumer's whole handler: route the batch, answer Lambda which records failed."""
    return route(event.get("Records") or [], routes).response()
