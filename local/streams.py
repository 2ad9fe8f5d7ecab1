"""DynamoDB Streams event source mappings: read every shard and invoke the function as Lambda does.

One poller per mapping, honouring its settings from the template:

- records are read per shard in order, parents before children, from StartingPosition;
- FilterCriteria drops records before batching (Lambda never invokes for them);
- a batch is up to BatchSize records, sent when full or MaximumBatchingWindowInSeconds after its
  first record arrived;
- a function error (an exception) retries the batch; with BisectBatchOnFunctionError the batch is
  split in halves first, and splitting does not use up the retry quota;
- with ReportBatchItemFailures the records before the lowest reported sequence number are
  checkpointed and the batch is retried from it; an empty or unknown itemIdentifier fails the
  whole batch;
- after MaximumRetryAttempts retries, or once records are older than MaximumRecordAgeInSeconds,
  they are discarded: the OnFailure destination gets Lambda's invocation record, which names the
  shard and sequence range, not the records (as in AWS); the shard then moves on.

The shard stays blocked while a batch is retried, which is the point: a poison record must end in
the destination, never stall its shard for a day nor vanish.
"""

import json
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from local.filtering import FilterPattern, filter_patterns, passes
from local.lambdas import Function, Invocation

log = logging.getLogger("local.streams")

POLL_INTERVAL_S = 0.25  # Lambda polls each shard four times a second
# A mapping that has read nothing for QUIET_AFTER_S, with nothing buffered, polls once a second until
# records come again: an idle stack's pollers cost the machine about half as much (decision 256), and
# the first record after a quiet spell waits up to a second to be read.
QUIET_AFTER_S = 5.0
QUIET_POLL_INTERVAL_S = 1.0
SHARD_REFRESH_S = 5.0  # how often DescribeStream looks for new (child) shards
RETRY_BACKOFF_S = (0.1, 0.2, 0.5, 1.0, 2.0)  # between retries of a failing batch, local pace
MAX_GET_RECORDS = 1000  # the GetRecords maximum

RETRIES_EXHAUSTED = "RetryAttemptsExhausted"
RECORD_AGE_EXCEEDED = "RecordAgeExceeded"


class Destination(Protocol):
    """Where discarded batches are reported (the mapping's OnFailure destination)."""

    name: str

    def send(self, invocation_record: Mapping[str, Any]) -> None: ...


@dataclass(frozen=True)
class StreamSettings:
    """The settings of one DynamoDB event source mapping, with Lambda's defaults."""

    batch_size: int = 100
    batching_window_s: float = 0.0
    starting_position: str = "LATEST"
    filters: tuple[FilterPattern, ...] = ()
    report_batch_item_failures: bool = False
    bisect_on_error: bool = False
    maximum_retry_attempts: int = -1  # -1: until the record expires
    maximum_record_age_s: int = -1  # -1: no limit
    on_failure: str | None = None  # the destination's ARN
    enabled: bool = True

    @classmethod
    def from_event(cls, props: Mapping[str, Any]) -> "StreamSettings":
        """From the resolved ``Properties`` of a SAM ``Type: DynamoDB`` event."""
        return cls(
            batch_size=int(props.get("BatchSize", 100)),
            batching_window_s=float(props.get("MaximumBatchingWindowInSeconds", 0)),
            starting_position=str(props.get("StartingPosition", "LATEST")),
            filters=filter_patterns(props.get("FilterCriteria")),
            report_batch_item_failures="ReportBatchItemFailures" in (props.get("FunctionResponseTypes") or ()),
            bisect_on_error=bool(props.get("BisectBatchOnFunctionError", False)),
            maximum_retry_attempts=int(props.get("MaximumRetryAttempts", -1)),
            maximum_record_age_s=int(props.get("MaximumRecordAgeInSeconds", -1)),
            on_failure=((props.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination"),
            enabled=bool(props.get("Enabled", True)),
        )


@dataclass
class PollerStats:
    """Counters shown by ``GET /__local/stack``."""

    records_read: int = 0
    records_filtered_out: int = 0
    invocations: int = 0
    function_errors: int = 0
    partial_failures: int = 0
    records_discarded: int = 0


@dataclass
class _Shard:
    shard_id: str
    parent_id: str | None
    start_at: str  # the iterator type of the first read: the mapping's StartingPosition or TRIM_HORIZON
    iterator: str | None = None
    last_sequence: str | None = None  # the last record read (the read position, not the checkpoint)
    closed: bool = False  # GetRecords returned no next iterator: nothing more will arrive
    buffer: list[dict[str, Any]] = field(default_factory=list)  # read and filtered, not yet delivered
    first_buffered_at: float = 0.0

    @property
    def finished(self) -> bool:
        return self.closed and not self.buffer


@dataclass
class _Attempt:
    """Records being retried together: a batch, its unfinished tail, or one half of it."""

    records: list[dict[str, Any]]
    retries: int = 0
    invocations: int = 0
    last: Invocation | None = None


def poll_wait(backlog: bool, window_left_s: float | None, quiet_for_s: float) -> float:
    """How long a mapping waits before its next poll.

    None while there is a backlog (the last poll delivered a batch or read a full page: more may be
    waiting, and Lambda invokes back to back then). Records held by an open batching window wait at
    Lambda's pace, or less when the window closes sooner (``window_left_s``): polling at once would
    only read the next few records into the same batch, and under steady writes a mapping with a
    window would poll without pause (one GetRecords per record, with the stack's CPU and the engine's
    spent on it). Otherwise Lambda's interval while records came lately, longer once the stream has
    been quiet for ``QUIET_AFTER_S``.
    """
    if backlog:
        return 0.0
    if window_left_s is not None:
        return max(0.0, min(POLL_INTERVAL_S, window_left_s))
    return POLL_INTERVAL_S if quiet_for_s < QUIET_AFTER_S else QUIET_POLL_INTERVAL_S


class StreamPoller:
    """Delivers one stream's records to one function with one mapping's settings."""

    def __init__(
        self,
        *,
        function: Function,
        stream_arn: str,
        settings: StreamSettings,
        streams: Any,
        destination: Destination | None = None,
        region: str = "us-east-1",
        source_name: str = "",
        stop: threading.Event | None = None,
        clock: Callable[[], float] = time.time,
        retry_backoff_s: Sequence[float] = RETRY_BACKOFF_S,
    ) -> None:
        """``streams`` is a boto3 ``dynamodbstreams`` client; ``stop`` ends ``run`` and any wait
        between retries; ``clock`` gives epoch seconds (record ages, batching window)."""
        self.function = function
        self.stream_arn = stream_arn
        self.settings = settings
        self.destination = destination
        self.region = region
        self.label = f"{function.name} <- {source_name or stream_arn}"
        self.stats = PollerStats()
        self._streams = records_as_sent(streams)
        self._stop = stop or threading.Event()
        self._clock = clock
        self._backoff = tuple(retry_backoff_s) or (0.0,)
        self._shards: dict[str, _Shard] = {}
        self._next_refresh = 0.0
        self._backlog = False  # the last poll delivered a batch or read a full page: poll again at once

    # -- the loop ----------------------------------------------------------------------------

    def run(self) -> None:
        """Poll until the stop event is set; engine errors are logged and retried on the next poll."""
        last_progress = time.monotonic()
        while not self._stop.is_set():
            try:
                progressed = self.poll()
            except (BotoCoreError, ClientError) as error:
                if self._stop.is_set():
                    return
                log.warning("%s: polling failed: %s", self.label, error)
                progressed = 0
            now = time.monotonic()
            if progressed or self.buffered():
                last_progress = now
            self._stop.wait(self.next_wait(now - last_progress))

    def next_wait(self, quiet_for_s: float) -> float:
        """How long to wait before the next poll, after the last one (``poll_wait``)."""
        return poll_wait(self._backlog, self.window_left_s(), quiet_for_s)

    def buffered(self) -> bool:
        """Records read and waiting for their batch (a batching window that has not closed)."""
        return any(shard.buffer for shard in self._shards.values())

    def window_left_s(self) -> float | None:
        """Seconds until the first open batching window closes; None when no record is waiting."""
        opened = [shard.first_buffered_at for shard in self._shards.values() if shard.buffer]
        return min(opened) + self.settings.batching_window_s - self._clock() if opened else None

    def poll(self) -> int:
        """One round over the shards: read what is new and deliver the batches that are due.

        Returns how many records were read or delivered (0: nothing happened, the caller may wait).
        """
        self._backlog = False
        if not self.settings.enabled:
            return 0
        if time.monotonic() >= self._next_refresh:
            self._discover_shards()
        progressed = 0
        for shard in list(self._shards.values()):
            if shard.finished or not self._parent_finished(shard):
                continue
            progressed += self._read(shard)
            while self._batch_due(shard):
                batch, shard.buffer = shard.buffer[: self.settings.batch_size], shard.buffer[self.settings.batch_size :]
                shard.first_buffered_at = self._clock()
                progressed += len(batch)
                self._backlog = True
                if not self._deliver(shard, batch):
                    return progressed  # stopping
        return progressed

    # -- shards ------------------------------------------------------------------------------

    def _discover_shards(self) -> None:
        # StartingPosition applies to the shards there when the mapping starts; shards found later
        # are new and are read from their start, or their first records would be skipped.
        start_at = self.settings.starting_position if not self._shards else "TRIM_HORIZON"
        self._next_refresh = time.monotonic() + SHARD_REFRESH_S
        request: dict[str, Any] = {"StreamArn": self.stream_arn}
        while True:
            description = self._streams.describe_stream(**request)["StreamDescription"]
            for raw in description.get("Shards", []):
                if raw["ShardId"] not in self._shards:
                    self._shards[raw["ShardId"]] = _Shard(raw["ShardId"], raw.get("ParentShardId"), start_at)
            last = description.get("LastEvaluatedShardId")
            if not last:
                break
            request["ExclusiveStartShardId"] = last

    def _parent_finished(self, shard: _Shard) -> bool:
        parent = self._shards.get(shard.parent_id) if shard.parent_id else None
        return parent is None or parent.finished

    def _iterator(self, shard: _Shard) -> str:
        if shard.iterator is None:
            request: dict[str, Any] = {"StreamArn": self.stream_arn, "ShardId": shard.shard_id}
            if shard.last_sequence is not None:
                request |= {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": shard.last_sequence}
            else:
                request["ShardIteratorType"] = shard.start_at
            shard.iterator = self._streams.get_shard_iterator(**request)["ShardIterator"]
        return shard.iterator

    def _read(self, shard: _Shard) -> int:
        if shard.closed or len(shard.buffer) >= self.settings.batch_size:
            return 0
        try:
            page = self._streams.get_records(ShardIterator=self._iterator(shard), Limit=MAX_GET_RECORDS)
        except ClientError as error:
            code = error.response["Error"]["Code"]
            if code == "ExpiredIteratorException":
                shard.iterator = None  # iterators live 15 minutes; resume after the last record read
                return 0
            if code == "TrimmedDataAccessException":
                shard.iterator, shard.last_sequence, shard.start_at = None, None, "TRIM_HORIZON"
                return 0
            raise
        shard.iterator = page.get("NextShardIterator")
        if shard.iterator is None:
            shard.closed = True
            self._next_refresh = 0.0  # its children, if any, are due now
        records = page.get("Records", [])
        self.stats.records_read += len(records)
        self._backlog |= len(records) >= MAX_GET_RECORDS
        for raw in records:
            shard.last_sequence = raw["dynamodb"]["SequenceNumber"]
            record = lambda_record(raw, self.stream_arn, self.region)
            if not passes(self.settings.filters, record):
                self.stats.records_filtered_out += 1
                continue
            if not shard.buffer:
                shard.first_buffered_at = self._clock()
            shard.buffer.append(record)
        return len(records)

    def _batch_due(self, shard: _Shard) -> bool:
        if not shard.buffer:
            return False
        full = len(shard.buffer) >= self.settings.batch_size
        waited = self._clock() - shard.first_buffered_at >= self.settings.batching_window_s
        return full or waited or shard.closed

    # -- delivery ----------------------------------------------------------------------------

    def _deliver(self, shard: _Shard, batch: list[dict[str, Any]]) -> bool:
        """Invoke until every record of ``batch`` succeeded or was discarded; False when stopping."""
        pending = deque([_Attempt(batch)])
        while pending:
            attempt = pending[0]
            self._discard_expired(shard, attempt)
            if not attempt.records:
                pending.popleft()
                continue
            result = self.function.invoke({"Records": attempt.records})
            attempt.invocations += 1
            attempt.last = result
            self.stats.invocations += 1
            size = len(attempt.records)
            if result.failed:
                self.stats.function_errors += 1
                failed_from: int | None = 0
                first_line = next(iter(result.error_message.splitlines()), "")
                reason = f"{result.error_type}: {first_line}"
            else:
                failed_from = self._first_failure(attempt.records, result.payload)
                reason = "reported batch item failures"
            if failed_from is None:
                log.info("%s: %d records ok (%.0f ms)", self.label, size, result.duration_ms)
                pending.popleft()
                continue
            if not result.failed:
                self.stats.partial_failures += 1
                attempt.records = attempt.records[failed_from:]  # the records before it are checkpointed
            if result.failed and self.settings.bisect_on_error and size > 1:
                half = size // 2
                halves = [
                    _Attempt(part, attempt.retries, attempt.invocations, result)
                    for part in (attempt.records[:half], attempt.records[half:])
                ]
                pending.popleft()
                pending.extendleft(reversed(halves))
                log.info("%s: %d records failed (%s), bisecting %d + %d", self.label, size, reason, half, size - half)
                continue
            attempt.retries += 1
            limit = self.settings.maximum_retry_attempts
            if 0 <= limit < attempt.retries:
                pending.popleft()
                self._discard(shard, attempt, RETRIES_EXHAUSTED)
                continue
            log.info(
                "%s: %d records failed at record %d (%s), retry %d%s",
                self.label,
                size,
                failed_from + 1,
                reason,
                attempt.retries,
                f"/{limit}" if limit >= 0 else "",
            )
            if self._stop.wait(self._backoff[min(attempt.retries, len(self._backoff)) - 1]):
                return False
        return True

    def _first_failure(self, records: list[dict[str, Any]], payload: Any) -> int | None:
        """Index of the first record to retry from a partial batch response; None if all succeeded."""
        if not self.settings.report_batch_item_failures or not isinstance(payload, Mapping):
            return None
        failures = payload.get("batchItemFailures")
        if not failures:
            return None
        position = {r["dynamodb"]["SequenceNumber"]: i for i, r in enumerate(records)}
        indexes = []
        for failure in failures:
            identifier = failure.get("itemIdentifier") if isinstance(failure, Mapping) else None
            if not identifier or identifier not in position:
                return 0  # Lambda treats an empty or unknown identifier as a failure of the whole batch
            indexes.append(position[identifier])
        return min(indexes)

    def _discard_expired(self, shard: _Shard, attempt: _Attempt) -> None:
        limit = self.settings.maximum_record_age_s
        if limit < 0:
            return
        now = self._clock()
        live: list[dict[str, Any]] = []
        expired: list[dict[str, Any]] = []
        for record in attempt.records:
            too_old = now - record["dynamodb"]["ApproximateCreationDateTime"] > limit
            (expired if too_old else live).append(record)
        if expired:
            attempt.records = live
            self._discard(
                shard, _Attempt(expired, attempt.retries, attempt.invocations, attempt.last), RECORD_AGE_EXCEEDED
            )

    def _discard(self, shard: _Shard, attempt: _Attempt, condition: str) -> None:
        self.stats.records_discarded += len(attempt.records)
        record = self.invocation_record(shard.shard_id, attempt, condition)
        info = record["DDBStreamBatchInfo"]
        span = f"{info['startSequenceNumber']}..{info['endSequenceNumber']}"
        if self.destination is None:
            log.warning(
                "%s: %s, %d records discarded (%s), no OnFailure destination",
                self.label,
                condition,
                len(attempt.records),
                span,
            )
            return
        self.destination.send(record)
        log.warning(
            "%s: %s, %d records (%s) reported to %s",
            self.label,
            condition,
            len(attempt.records),
            span,
            self.destination.name,
        )

    def invocation_record(self, shard_id: str, attempt: _Attempt, condition: str) -> dict[str, Any]:
        """Lambda's on-failure invocation record for a stream batch: where the records are, not them."""
        first, last = attempt.records[0]["dynamodb"], attempt.records[-1]["dynamodb"]
        response: dict[str, Any] = {"statusCode": 200, "executedVersion": "$LATEST"}
        if attempt.last is not None and attempt.last.failed:
            response["functionError"] = "Unhandled"
        return {
            "requestContext": {
                "requestId": str(uuid.uuid4()),
                "functionArn": self.function.arn,
                "condition": condition,
                "approximateInvokeCount": attempt.invocations,
            },
            "responseContext": response,
            "version": "1.0",
            "timestamp": _iso(self._clock(), millis=True),
            "DDBStreamBatchInfo": {
                "shardId": shard_id,
                "startSequenceNumber": first["SequenceNumber"],
                "endSequenceNumber": last["SequenceNumber"],
                "approximateArrivalOfFirstRecord": _iso(first["ApproximateCreationDateTime"]),
                "approximateArrivalOfLastRecord": _iso(last["ApproximateCreationDateTime"]),
                "batchSize": len(attempt.records),
                "streamArn": self.stream_arn,
            },
        }


class SqsDestination:
    """An SQS OnFailure destination: one message per discarded batch."""

    def __init__(self, sqs: Any, queue_url: str, name: str) -> None:
        self._sqs, self._url, self.name = sqs, queue_url, name

    def send(self, invocation_record: Mapping[str, Any]) -> None:
        self._sqs.send_message(QueueUrl=self._url, MessageBody=json.dumps(invocation_record))


_AS_SENT = "local.streams.records-as-sent"


def records_as_sent(streams: Any) -> Any:
    """``streams`` (a boto3 ``dynamodbstreams`` client), its GetRecords answering records as the engine
    sent them (JSON: binary attributes in base64, ApproximateCreationDateTime in epoch seconds).

    botocore walks every attribute value of every record through the service model, turning base64
    into bytes and numbers into datetimes, which ``lambda_record`` then turned back: that walk was
    three quarters of the stack's CPU under steady orders (two mappings read the commerce stream), held
    under the GIL its HTTP requests wait for. The records are taken from the body before botocore parses
    it (the rest of the answer, and every error, are still parsed by botocore). Idempotent per client.
    """
    streams.meta.events.register("before-parse.dynamodb-streams.GetRecords", _take_records, unique_id=_AS_SENT)
    return streams


def _take_records(response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any) -> None:
    if response_dict["status_code"] != 200:
        return
    page = json.loads(response_dict["body"])
    customized_response_dict["Records"] = page.pop("Records", [])
    response_dict["body"] = json.dumps(page).encode()


def lambda_record(raw: Mapping[str, Any], stream_arn: str, region: str) -> dict[str, Any]:
    """A GetRecords record, as ``records_as_sent`` reads it, as Lambda hands it to a function.

    Lambda adds ``eventSourceARN``, reports the function's region and gives ApproximateCreationDateTime
    in whole epoch seconds.
    """
    change = dict(raw["dynamodb"])
    change["ApproximateCreationDateTime"] = int(change.get("ApproximateCreationDateTime") or time.time())
    record = {
        "eventID": raw["eventID"],
        "eventName": raw["eventName"],
        "eventVersion": raw.get("eventVersion", "1.1"),
        "eventSource": "aws:dynamodb",
        "awsRegion": region,
        "dynamodb": change,
        "eventSourceARN": stream_arn,
    }
    if "userIdentity" in raw:  # TTL deletions carry the service as their principal
        record["userIdentity"] = raw["userIdentity"]
    return record


def _iso(epoch: float, millis: bool = False) -> str:
    moment = datetime.fromtimestamp(epoch, UTC)
    if millis:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
