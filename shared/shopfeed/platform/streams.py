"""DynamoDB stream records, parsed once into typed values and routed by record type.

Lambda hands a stream consumer a batch of records, and Powertools' BatchProcessor reports which of
them failed (partial batch response: Lambda checkpoints before the first failure and retries from
there). Its record handler sees one record at a time, but the work is cheaper per batch: PutEvents
takes ten entries, and counters must aggregate a batch into one write per item. So a consumer
``route``s the whole batch first, each record type's handler getting all of its records at once and
answering which ones failed; the processor then reads each record's outcome back with ``settle``::

    outcome = streams.route(event["Records"], {"OutboxEvent": relay_outbox_events})
    return process_partial_response(event, record_handler=outcome.settle, processor=processor)
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from shopfeed.platform import dynamo

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
    def entity_type(self) -> str | None:
        """The record type: ``entity_type`` of the new image, or of the old one for a REMOVE."""
        image = self.new_image if self.new_image is not None else self.old_image
        value = (image or {}).get(ENTITY_TYPE)
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
        keys = dynamo.deserialize(images["Keys"])
        new_image = dynamo.deserialize(images["NewImage"]) if "NewImage" in images else None
        old_image = dynamo.deserialize(images["OldImage"]) if "OldImage" in images else None
        seconds = stream.approximate_creation_date_time
    except (KeyError, TypeError, ValueError) as error:
        raise MalformedRecord(f"stream record {sequence_number} is malformed: {error!r}") from error
    if seconds is None:
        raise MalformedRecord(f"stream record {sequence_number} has no ApproximateCreationDateTime")
    return ItemChange(sequence_number, kind, keys, new_image, old_image, datetime.fromtimestamp(seconds, UTC))


Failures = dict[str, Exception]
"""Why records failed, by sequence number."""

RecordTypeHandler = Callable[[Sequence[ItemChange]], Mapping[str, Exception]]
"""Handles every record of one type in a batch at once; returns the failed ones by sequence number.

Raising fails the whole invocation (Lambda retries the batch, bisecting it): do that only for an
outage that no record can get past, never for one bad record.
"""


def parse_images[T](changes: Iterable[ItemChange], model: Callable[[dynamo.Item], T]) -> tuple[dict[str, T], Failures]:
    """Each change's new image mapped by ``model``, by sequence number, and the images it refused
    (a KeyError or ValueError, which includes pydantic's ValidationError): those fail on their own."""
    parsed: dict[str, T] = {}
    failures: Failures = {}
    for change in changes:
        try:
            parsed[change.sequence_number] = model(change.new_image or {})
        except (KeyError, ValueError) as error:
            failures[change.sequence_number] = error
    return parsed, failures


class BatchOutcome:
    """What happened to each record of a batch, read back record by record by the batch processor."""

    def __init__(self, failures: Mapping[str | None, Exception]) -> None:
        self._failures = dict(failures)

    def settle(self, record: DynamoDBRecord) -> None:
        """Powertools' record handler: raises the record's failure, if it had one, so it is reported."""
        failure = self._failures.get(_sequence_number(record.raw_event))
        if failure is not None:
            raise failure


def _sequence_number(raw: Mapping[str, Any]) -> str | None:
    value = (raw.get("dynamodb") or {}).get("SequenceNumber")
    return str(value) if value is not None else None


def route(records: Iterable[Mapping[str, Any]], routes: Mapping[str, RecordTypeHandler]) -> BatchOutcome:
    """Parse every record, hand each record type's records to its handler, collect the failures.

    A record that does not parse fails on its own. A record type without a route is acknowledged:
    the event source mapping's FilterCriteria should not have let it in, and failing it would only
    replay it until it ages out.
    """
    failures: dict[str | None, Exception] = {}
    by_type: dict[str, list[ItemChange]] = {}
    for raw in records:
        try:
            change = parse(DynamoDBRecord(dict(raw)))
        except MalformedRecord as error:
            failures[_sequence_number(raw)] = error
            continue
        entity_type = change.entity_type
        if entity_type is not None and entity_type in routes:
            by_type.setdefault(entity_type, []).append(change)
    for entity_type, changes in by_type.items():
        failures.update(routes[entity_type](changes))
    return BatchOutcome(failures)
