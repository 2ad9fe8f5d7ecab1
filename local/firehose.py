"""Firehose delivery streams to S3, emulated: what a rule puts into a stream lands in the bucket under
the keys Firehose would write.

moto's Firehose writes every batch under ``<Prefix>YYYY/MM/DD/HH/`` whatever the prefix's expressions
say (no dynamic partitioning, no ``!{...}``), and moto's EventBridge does not deliver to Firehose, so
the local stack does both here:

- provisioning gives each delivery stream a queue of its own (``<stream>-records``: the records in
  flight) and points every rule target aimed at the stream at that queue, which moto delivers to;
- a ``DeliveryStream`` receives them, evaluates the template's ``MetadataExtraction`` query for each
  record (the jq subset of ``PartitionQuery``), renders the ``Prefix`` (``!{partitionKeyFromQuery:k}``,
  ``!{timestamp:fmt}``, ``!{firehose:...}``) and buffers records per rendered prefix, as Firehose
  does per partition. A buffer becomes one object when it reaches ``SizeInMBs`` or has waited
  ``buffer_s``, named as Firehose names objects (``<stream>-<version>-<yyyy-MM-dd-HH-mm-ss>-<uuid>``,
  ``.gz`` with GZIP), its records joined by ``AppendDelimiterToRecord``'s newline. A record the query
  cannot partition goes under ``ErrorOutputPrefix`` (error output type ``processing-failed``);
- a message is deleted only once its object is written: at least once, as Firehose delivers.

``buffer_s`` is the stack's (``--delivery-buffer-seconds``), not the template's ``IntervalInSeconds``:
nobody waits 15 minutes for a local object, and the layout does not depend on it.
"""

import base64
import gzip
import json
import logging
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from botocore.exceptions import BotoCoreError, ClientError

log = logging.getLogger("local.firehose")

RECEIVE_WAIT_S: Final = 1  # long polling, short enough for a prompt shutdown
VERSION: Final = 1  # a delivery stream's version: 1 until its destination is updated
# The destination's properties the emulation reads (the role, logging and encryption are AWS's).
DESTINATION_PROPERTIES: Final = (
    "BucketARN",
    "Prefix",
    "ErrorOutputPrefix",
    "BufferingHints",
    "CompressionFormat",
    "DynamicPartitioningConfiguration",
    "ProcessingConfiguration",
)
PROCESSING_FAILED: Final = "processing-failed"


class UnsupportedExpression(ValueError):
    """A query or prefix the local emulation does not evaluate (it fails the stack's start, loudly)."""


# -- the jq subset of MetadataExtractionQuery ------------------------------------------------------

# One step of a path: .name, .["name"], or a slice [start:end] of a string or array.
_STEP = re.compile(r'\.(?P<name>[A-Za-z_]\w*)|\.?\["(?P<quoted>[^"\\]+)"\]|\[(?P<start>-?\d*):(?P<end>-?\d*)\]')
_KEY = re.compile(r"\s*(?P<key>[A-Za-z_]\w*)\s*:\s*(?P<path>\S.*?)\s*$")


@dataclass(frozen=True)
class PartitionQuery:
    """``{key: path, ...}`` where a path is steps of ``.field``, ``.["field"]`` and ``[a:b]``: the
    object-of-paths form the partition keys take. jq proper is not a dependency of the project;
    anything outside this form is refused when the stack starts, not evaluated wrongly."""

    paths: Mapping[str, tuple[tuple[str, Any], ...]]

    @classmethod
    def parse(cls, query: str) -> "PartitionQuery":
        text = query.strip()
        if not (text.startswith("{") and text.endswith("}")):
            raise UnsupportedExpression(f"the local stack evaluates {{key: path, ...}} queries only: {query!r}")
        paths = {}
        for part in text[1:-1].split(","):
            entry = _KEY.fullmatch(part)
            if entry is None:
                raise UnsupportedExpression(f"not a `key: path` entry: {part.strip()!r} in {query!r}")
            paths[entry["key"]] = _steps(entry["path"], query)
        return cls(paths)

    def evaluate(self, record: Any) -> dict[str, str] | None:
        """The partition keys of a record, or None when one is missing (null), as Firehose fails it."""
        keys = {}
        for key, steps in self.paths.items():
            value = record
            for kind, arg in steps:
                value = _apply(kind, arg, value)
            if value is None or isinstance(value, dict | list):
                return None
            keys[key] = value if isinstance(value, str) else json.dumps(value)
        return keys


def _steps(path: str, query: str) -> tuple[tuple[str, Any], ...]:
    steps: list[tuple[str, Any]] = []
    at = 0
    while at < len(path):
        step = _STEP.match(path, at)
        if step is None:
            raise UnsupportedExpression(f"the local stack does not evaluate {path[at:]!r} in {query!r}")
        if step["name"] or step["quoted"]:
            steps.append(("field", step["name"] or step["quoted"]))
        else:
            bounds = (int(step["start"]) if step["start"] else None, int(step["end"]) if step["end"] else None)
            steps.append(("slice", bounds))
        at = step.end()
    if not steps:
        raise UnsupportedExpression(f"an empty path in {query!r}")
    return tuple(steps)


def _apply(kind: str, arg: Any, value: Any) -> Any:
    # jq: a field of null is null; a slice of null is null; anything else of the wrong type fails.
    if value is None:
        return None
    if kind == "field":
        return value.get(arg) if isinstance(value, dict) else None
    return value[slice(*arg)] if isinstance(value, str | list) else None


# -- prefixes ----------------------------------------------------------------------------------------

_EXPRESSION = re.compile(r"!\{(?P<namespace>[\w-]+):(?P<argument>[^}]+)\}")
# Java DateTimeFormatter letters Firehose's !{timestamp:...} takes, as strftime directives.
_JAVA_TIME = (("yyyy", "%Y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"), ("mm", "%M"), ("ss", "%S"))


def render_prefix(prefix: str, arrival: datetime, keys: Mapping[str, str], error_type: str | None = None) -> str:
    """A prefix with its expressions evaluated as Firehose evaluates them for one record."""

    def evaluate(expression: re.Match[str]) -> str:
        namespace, argument = expression["namespace"], expression["argument"]
        if namespace == "partitionKeyFromQuery" and argument in keys:
            return keys[argument]
        if namespace == "timestamp":
            return arrival.strftime(java_time_format(argument))
        if namespace == "firehose" and argument == "error-output-type" and error_type:
            return error_type
        if namespace == "firehose" and argument == "random-string":
            return uuid.uuid4().hex[:11]
        raise UnsupportedExpression(f"the local stack cannot evaluate {expression[0]} in {prefix!r}")

    return _EXPRESSION.sub(evaluate, prefix)


def java_time_format(pattern: str) -> str:
    """``yyyy-MM-dd`` → ``%Y-%m-%d``; letters outside the table are refused, not guessed."""
    converted = pattern
    for java, directive in _JAVA_TIME:
        converted = converted.replace(java, directive)
    if re.search(r"[A-Za-z]", re.sub(r"%[YmdHMS]", "", converted)):
        raise UnsupportedExpression(f"the local stack formats yyyy MM dd HH mm ss only: {pattern!r}")
    return converted


# -- the delivery stream ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DeliverySpec:
    """One delivery stream's S3 destination, as the template declares it (resolved)."""

    name: str
    bucket: str
    prefix: str
    error_prefix: str
    query: PartitionQuery | None
    delimiter: bytes
    gzip: bool
    size_bytes: int
    queue_url: str
    queue_arn: str

    @classmethod
    def of(cls, name: str, destination: Mapping[str, Any], queue_url: str, queue_arn: str) -> "DeliverySpec":
        processors = {
            p["Type"]: {q["ParameterName"]: q["ParameterValue"] for q in p.get("Parameters") or ()}
            for p in (destination.get("ProcessingConfiguration") or {}).get("Processors") or ()
        }
        partitioned = bool((destination.get("DynamicPartitioningConfiguration") or {}).get("Enabled"))
        extraction = processors.get("MetadataExtraction", {})
        if partitioned and "MetadataExtractionQuery" not in extraction:
            raise UnsupportedExpression(f"{name}: dynamic partitioning without an inline (jq) query")
        # AppendDelimiterToRecord appends a newline unless its Delimiter (escaped, "\\n") says otherwise.
        appended = processors.get("AppendDelimiterToRecord")
        delimiter = "" if appended is None else appended.get("Delimiter", "\\n")
        compression = destination.get("CompressionFormat", "UNCOMPRESSED")
        if compression not in ("UNCOMPRESSED", "GZIP"):
            raise UnsupportedExpression(f"{name}: the local stack writes GZIP or UNCOMPRESSED, not {compression}")
        return cls(
            name=name,
            bucket=str(destination["BucketARN"]).rsplit(":", 1)[-1],
            prefix=str(destination.get("Prefix", "")),
            error_prefix=str(destination.get("ErrorOutputPrefix", "")),
            query=PartitionQuery.parse(extraction["MetadataExtractionQuery"]) if partitioned else None,
            delimiter=delimiter.encode().decode("unicode_escape").encode(),
            gzip=compression == "GZIP",
            size_bytes=int((destination.get("BufferingHints") or {}).get("SizeInMBs", 5)) * 1024 * 1024,
            queue_url=queue_url,
            queue_arn=queue_arn,
        )


@dataclass
class DeliveryStats:
    """Counters shown by ``GET /__local/stack``."""

    records_received: int = 0
    records_failed: int = 0
    objects_written: int = 0


@dataclass
class _Buffer:
    opened_at: datetime
    records: list[bytes] = field(default_factory=list)
    receipts: list[str] = field(default_factory=list)
    size: int = 0


class DeliveryStream:
    """Moves one stream's records from its queue to its bucket (``pump`` is one step of it)."""

    def __init__(
        self,
        spec: DeliverySpec,
        sqs: Any,
        s3: Any,
        buffer_s: float,
        stop: threading.Event | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.spec = spec
        self.sqs = sqs
        self.s3 = s3
        self.buffer = timedelta(seconds=buffer_s)
        self.stop = stop or threading.Event()
        self.clock = clock
        self.stats = DeliveryStats()
        self._buffers: dict[str, _Buffer] = {}

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.pump()
            except (BotoCoreError, ClientError) as error:  # the engine restarting: try again
                log.warning("%s: %s", self.spec.name, error)
                self.stop.wait(1)
        self.flush(everything=True)

    def pump(self, wait_s: int = RECEIVE_WAIT_S) -> int:
        """Take what the queue holds (up to 10 messages), then write every buffer that is due.
        Returns the objects written."""
        messages = self.sqs.receive_message(
            QueueUrl=self.spec.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=wait_s
        ).get("Messages", [])
        arrival = self.clock()
        for message in messages:
            self._add(message["Body"], message["ReceiptHandle"], arrival)
        return self.flush()

    def flush(self, everything: bool = False) -> int:
        """Write each buffer that is full or has waited ``buffer_s`` (``everything``: all of them)."""
        now = self.clock()
        due = [
            prefix
            for prefix, buffer in self._buffers.items()
            if everything or buffer.size >= self.spec.size_bytes or now - buffer.opened_at >= self.buffer
        ]
        for prefix in due:
            self._write(prefix, self._buffers.pop(prefix))
        return len(due)

    def _add(self, body: str, receipt: str, arrival: datetime) -> None:
        self.stats.records_received += 1
        record = body.encode()
        keys = self._partition_keys(body)
        if keys is None:
            self.stats.records_failed += 1
            prefix = render_prefix(self.spec.error_prefix, arrival, {}, PROCESSING_FAILED)
            record = json.dumps(_error_record(record, arrival), separators=(",", ":")).encode()
            delimiter = b"\n"  # error records are JSON Lines whatever the processors say
        else:
            prefix = render_prefix(self.spec.prefix, arrival, keys)
            delimiter = self.spec.delimiter
        buffer = self._buffers.setdefault(prefix, _Buffer(arrival))
        buffer.records.append(record + delimiter)
        buffer.receipts.append(receipt)
        buffer.size += len(record) + len(delimiter)

    def _partition_keys(self, body: str) -> dict[str, str] | None:
        if self.spec.query is None:
            return {}
        try:
            return self.spec.query.evaluate(json.loads(body))
        except ValueError:
            return None

    def _write(self, prefix: str, buffer: _Buffer) -> None:
        data = b"".join(buffer.records)
        name = f"{self.spec.name}-{VERSION}-{buffer.opened_at:%Y-%m-%d-%H-%M-%S}-{uuid.uuid4()}"
        if self.spec.gzip:
            data, name = gzip.compress(data), f"{name}.gz"
        self.s3.put_object(Bucket=self.spec.bucket, Key=f"{prefix}{name}", Body=data)
        self.stats.objects_written += 1
        # Deleted only now: a record whose object was never written comes back after the visibility timeout.
        for start in range(0, len(buffer.receipts), 10):
            entries = [{"Id": str(n), "ReceiptHandle": r} for n, r in enumerate(buffer.receipts[start : start + 10])]
            self.sqs.delete_message_batch(QueueUrl=self.spec.queue_url, Entries=entries)


def _error_record(record: bytes, arrival: datetime) -> dict[str, Any]:
    # The shape Firehose writes under ErrorOutputPrefix for a record dynamic partitioning failed.
    return {
        "attemptsMade": 1,
        "arrivalTimestamp": int(arrival.timestamp() * 1000),
        "errorCode": "DynamicPartitioning.MetadataExtractionFailed",
        "errorMessage": "The partition keys could not be extracted from the record.",
        "rawData": base64.b64encode(record).decode(),
    }
