"""SQS event source mappings: receive, invoke, delete what succeeded, as Lambda does.

Messages that fail (a function error: all of them; with ReportBatchItemFailures: the reported ones)
are not deleted, so they come back after the queue's visibility timeout and, past its redrive
policy's maxReceiveCount, move to its dead-letter queue: the retry policy of an SQS source lives
on the queue, locally as in AWS. FilterCriteria apply to the message with its body parsed as JSON
when it is JSON; messages no filter matches are deleted without invoking, as Lambda does.
"""

import base64
import json
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from local.filtering import FilterPattern, filter_patterns, passes
from local.lambdas import Function

log = logging.getLogger("local.queues")

RECEIVE_WAIT_S = 1  # long polling, short enough for a prompt shutdown


@dataclass
class QueueStats:
    """Counters shown by ``GET /__local/stack``."""

    messages_received: int = 0
    messages_filtered_out: int = 0
    invocations: int = 0
    failed_invocations: int = 0


@dataclass(frozen=True)
class QueueSettings:
    """The settings of one SQS event source mapping, with Lambda's defaults."""

    batch_size: int = 10
    batching_window_s: float = 0.0
    filters: tuple[FilterPattern, ...] = ()
    report_batch_item_failures: bool = False
    enabled: bool = True

    @classmethod
    def from_event(cls, props: Mapping[str, Any]) -> "QueueSettings":
        """From the resolved ``Properties`` of a SAM ``Type: SQS`` event."""
        return cls(
            batch_size=int(props.get("BatchSize", 10)),
            batching_window_s=float(props.get("MaximumBatchingWindowInSeconds", 0)),
            filters=filter_patterns(props.get("FilterCriteria")),
            report_batch_item_failures="ReportBatchItemFailures" in (props.get("FunctionResponseTypes") or ()),
            enabled=bool(props.get("Enabled", True)),
        )


class QueuePoller:
    """Delivers one queue's messages to one function with one mapping's settings."""

    def __init__(
        self,
        *,
        function: Function,
        queue_url: str,
        queue_arn: str,
        settings: QueueSettings,
        sqs: Any,
        region: str = "us-east-1",
        source_name: str = "",
        stop: threading.Event | None = None,
    ) -> None:
        self.function = function
        self.queue_url = queue_url
        self.queue_arn = queue_arn
        self.settings = settings
        self.region = region
        self.label = f"{function.name} <- {source_name or queue_arn}"
        self.stats = QueueStats()
        self._sqs = sqs
        self._stop = stop or threading.Event()

    def run(self) -> None:
        """Poll until the stop event is set; engine errors are logged and retried."""
        while not self._stop.is_set():
            try:
                self.poll(RECEIVE_WAIT_S)
            except (BotoCoreError, ClientError) as error:
                if self._stop.is_set():
                    return
                log.warning("%s: polling failed: %s", self.label, error)
                self._stop.wait(1.0)

    def poll(self, wait_s: int = 0) -> int:
        """Receive one batch (up to BatchSize, within the batching window) and deliver it; returns its size."""
        if not self.settings.enabled:
            return 0
        messages = self._receive(wait_s)
        if not messages:
            return 0
        self.stats.messages_received += len(messages)
        records = [self._record(m) for m in messages]
        wanted = [r for r in records if passes(self.settings.filters, _filter_view(r))]
        unwanted = [r for r in records if r not in wanted]
        self.stats.messages_filtered_out += len(unwanted)
        self._delete(unwanted)
        if wanted:
            self._deliver(wanted)
        return len(records)

    def _receive(self, wait_s: int) -> list[dict[str, Any]]:
        # Up to BatchSize messages: the first receive long-polls, later ones fill the batch until the
        # batching window closes (a receive returns ten at most).
        messages: list[dict[str, Any]] = []
        deadline = time.monotonic() + self.settings.batching_window_s
        wait = wait_s
        while True:
            messages += self._sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=min(10, self.settings.batch_size - len(messages)),
                WaitTimeSeconds=wait,
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            left = deadline - time.monotonic()
            if not messages or len(messages) >= self.settings.batch_size or left <= 0:
                return messages
            wait = max(0, min(wait_s, int(left)))

    def _deliver(self, records: list[dict[str, Any]]) -> None:
        result = self.function.invoke({"Records": records})
        self.stats.invocations += 1
        if result.failed:
            self.stats.failed_invocations += 1
            log.info("%s: %d messages failed (%s), left for redelivery", self.label, len(records), result.error_type)
            return
        failed = self._failed_ids(records, result.payload)
        if failed is None:  # the whole batch failed
            self.stats.failed_invocations += 1
            log.info(
                "%s: %d messages failed (invalid batch item failures), left for redelivery", self.label, len(records)
            )
            return
        self._delete([r for r in records if r["messageId"] not in failed])
        outcome = f"{len(failed)} failed, left for redelivery" if failed else "ok"
        log.info("%s: %d messages %s (%.0f ms)", self.label, len(records), outcome, result.duration_ms)

    def _failed_ids(self, records: list[dict[str, Any]], payload: Any) -> set[str] | None:
        """Message ids the function reported as failed; None when the response fails the whole batch."""
        if not self.settings.report_batch_item_failures or not isinstance(payload, Mapping):
            return set()
        known = {r["messageId"] for r in records}
        failed = set()
        for failure in payload.get("batchItemFailures") or ():
            identifier = failure.get("itemIdentifier") if isinstance(failure, Mapping) else None
            if not identifier or identifier not in known:
                return None
            failed.add(identifier)
        return failed

    def _delete(self, records: list[dict[str, Any]]) -> None:
        for start in range(0, len(records), 10):
            chunk = records[start : start + 10]
            self._sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": r["receiptHandle"]} for i, r in enumerate(chunk)],
            )

    def _record(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """An SQS message as Lambda hands it to a function."""
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message.get("Body", ""),
            "attributes": dict(message.get("Attributes") or {}),
            "messageAttributes": {
                name: {
                    "stringValue": value.get("StringValue"),
                    "binaryValue": _base64(value.get("BinaryValue")),
                    "stringListValues": value.get("StringListValues", []),
                    "binaryListValues": [_base64(v) for v in value.get("BinaryListValues", [])],
                    "dataType": value["DataType"],
                }
                for name, value in (message.get("MessageAttributes") or {}).items()
            },
            "md5OfBody": message.get("MD5OfBody", ""),
            "eventSource": "aws:sqs",
            "eventSourceARN": self.queue_arn,
            "awsRegion": self.region,
        }


def peek(sqs: Any, queue_url: str, hold_s: int = 30) -> list[dict[str, Any]]:
    """Every message on the queue, left on it, oldest first as SQS returns them.

    A receive returns ten messages at most, so the ones already seen are hidden for ``hold_s``
    while the rest are read, then all are made visible again. Each peek counts as a receive: on a
    queue with a redrive policy it moves messages closer to the dead-letter queue.
    """
    messages: list[dict[str, Any]] = []
    try:
        while page := sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=10, VisibilityTimeout=hold_s, WaitTimeSeconds=0
        ).get("Messages"):
            messages += page
    finally:
        for start in range(0, len(messages), 10):
            sqs.change_message_visibility_batch(
                QueueUrl=queue_url,
                Entries=[
                    {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                    for n, m in enumerate(messages[start : start + 10])
                ],
            )
    return messages


def _base64(value: bytes | None) -> str | None:
    return base64.b64encode(value).decode() if value is not None else None


def _filter_view(record: Mapping[str, Any]) -> Mapping[str, Any]:
    # Lambda matches body patterns against the parsed JSON body, and plain strings against the text.
    try:
        return {**record, "body": json.loads(record["body"])}
    except ValueError:
        return record
