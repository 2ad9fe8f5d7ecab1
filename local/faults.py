"""Fault injection: the failures AWS really answers, in the SDK calls of the local stack's functions.

``make dev ARGS="--faults 0.05 --fault-seed 7"``: every attempt of every AWS call a function makes
fails with probability 0.05, the way the service fails it, and every batch call (EventBridge
PutEvents, SQS SendMessageBatch, DynamoDB BatchWriteItem and BatchGetItem) answers, with the same
probability, 200 with part of its entries refused, those entries really not delivered. So the
service's retry paths run on this machine as they run in AWS on a bad day.

**How it hooks in.** ``local/worker.py`` (the Lambda runtime's stand-in) calls ``install`` before it
imports the handler: botocore event handlers on boto3's default session, which every client made
afterwards copies (``shopfeed.platform.clients`` makes its clients from that session). The stack's
own clients (pollers, queue and bucket pages) live in the stack's process and never see a fault:
they play AWS. Production code knows nothing of this module.

**What a fault looks like.** What the service sends on the wire, parsed by botocore into the same
exception, error code and retry decision as in AWS (``before-send`` answers it instead of sending):

- DynamoDB (JSON 1.0, ``__type`` namespaced, ``x-amz-crc32``): ProvisionedThroughputExceededException,
  ThrottlingException, RequestLimitExceeded (400), InternalServerError (500); a TransactWriteItems
  cancelled with TransactionConflict for one of its items; TransactionConflictException for a
  single-item write;
- SQS (JSON 1.0, query-compatible: ``x-amzn-query-error``): RequestThrottled (400), InternalError (500);
- EventBridge and Secrets Manager (JSON 1.1): ThrottlingException (400), their internal error (500);
- S3 (REST-XML): SlowDown (503), InternalError (500);
- every service: a connection reset before the request left (``ConnectionClosedError``), and a read
  timeout *after* the request was served (``ReadTimeoutError``: the write happened, its answer is
  lost), the case that breaks retries of non-idempotent writes.

A partial failure drops the chosen entries from the request (``before-parameter-build``) and reports
them failed in the parsed answer (``after-call``): FailedEntryCount and an ``ErrorCode`` per entry
(PutEvents), ``Failed`` (SendMessageBatch), ``UnprocessedItems`` / ``UnprocessedKeys``. When every
entry is dropped the call is answered with an empty success and nothing is sent.

**Seeded and reported.** Each worker process draws from its own generator, seeded with the stack's
seed, the function's name and the worker's number: the same seed and the same calls in a process
give the same faults (threads and timing make the stack as a whole vary). Calls and faults are
counted by ``service.Operation`` and kind; the worker hands the counts to the stack with each answer
(``take_counts``), and the stack adds them up (``Tally``) for ``GET /__local/stack`` and its exit.

Not simulated: the time a timeout takes (it is raised at once), and faults of the search engine
(not an AWS SDK call; its breaker has tests of its own).
"""

import json
import random
import threading
import uuid
import zlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.compat import HTTPHeaders
from botocore.exceptions import ConnectionClosedError, ReadTimeoutError
from botocore.httpsession import URLLib3Session

CALLS: Final = "calls"
CONNECTION_RESET: Final = "ConnectionReset"
READ_TIMEOUT: Final = "ReadTimeout"
PARTIAL: Final = "PartialFailure"
TRANSACTION_CONFLICT: Final = "TransactionConflict"

Counts = dict[str, dict[str, int]]
"""``{"dynamodb.GetItem": {"calls": 120, "ThrottlingException": 2, ...}}``"""


@dataclass(frozen=True)
class ServiceError:
    """An error answer as the service sends it: its code, HTTP status and message."""

    code: str
    status: int
    message: str
    namespace: str = ""  # the JSON protocols' ``__type`` prefix, where the service sends one


_DYNAMODB_NS: Final = "com.amazonaws.dynamodb.v20120810#"
_ERRORS: Final[Mapping[str, tuple[ServiceError, ...]]] = {
    "dynamodb": (
        ServiceError(
            "ProvisionedThroughputExceededException",
            400,
            "The level of configured provisioned throughput for the table was exceeded. "
            "Consider increasing your provisioning level with the UpdateTable API.",
            _DYNAMODB_NS,
        ),
        ServiceError(
            "ThrottlingException",
            400,
            "Rate of requests exceeds the allowed throughput.",
            "com.amazon.coral.availability#",
        ),
        ServiceError(
            "RequestLimitExceeded",
            400,
            "Throughput exceeds the current throughput limit for your account. "
            "Please contact AWS Support at https://aws.amazon.com/support request a limit increase",
            _DYNAMODB_NS,
        ),
        ServiceError("InternalServerError", 500, "Internal server error", _DYNAMODB_NS),
    ),
    "sqs": (
        ServiceError("RequestThrottled", 400, "Request is throttled.", "com.amazonaws.sqs#"),
        ServiceError("InternalError", 500, "We encountered an internal error. Please try again.", "com.amazonaws.sqs#"),
    ),
    "eventbridge": (
        ServiceError("ThrottlingException", 400, "Rate exceeded"),
        ServiceError("InternalException", 500, "An internal error occurred."),
    ),
    "secrets-manager": (
        ServiceError("ThrottlingException", 400, "Rate exceeded"),
        ServiceError("InternalServiceError", 500, "An internal error occurred."),
    ),
    "s3": (
        ServiceError("SlowDown", 503, "Please reduce your request rate."),
        ServiceError("InternalError", 500, "We encountered an internal error. Please try again."),
    ),
}
_SINGLE_ITEM_WRITES: Final = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
# A single-item write that meets an item a transaction holds.
_SINGLE_ITEM_CONFLICT: Final = ServiceError(
    "TransactionConflictException", 400, "Transaction is ongoing for the item", _DYNAMODB_NS
)
KINDS: Final = frozenset(
    {error.code for errors in _ERRORS.values() for error in errors}
    | {_SINGLE_ITEM_CONFLICT.code, TRANSACTION_CONFLICT, CONNECTION_RESET, READ_TIMEOUT, PARTIAL}
)
"""Every kind of fault, by the name ``--fault-kinds`` takes and the stack page counts."""
_JSON_VERSIONS: Final = {"dynamodb": "1.0", "sqs": "1.0", "eventbridge": "1.1", "secrets-manager": "1.1"}

# The batch calls that answer 200 with part of their entries refused, and what an empty success is.
_BATCHES: Final[Mapping[str, Mapping[str, Any]]] = {
    "eventbridge.PutEvents": {"FailedEntryCount": 0, "Entries": []},
    "sqs.SendMessageBatch": {"Successful": [], "Failed": []},
    "dynamodb.BatchWriteItem": {"UnprocessedItems": {}},
    "dynamodb.BatchGetItem": {"Responses": {}, "UnprocessedKeys": {}},
}
# Where the dropped entries wait between building the request and parsing its answer.
_DROPPED: Final = "local_faults_dropped"
_ALL_DROPPED: Final = "local_faults_all_dropped"


def _name(kind: ServiceError | str) -> str:
    return kind.code if isinstance(kind, ServiceError) else kind


class Tally:
    """Calls and faults by ``service.Operation`` and kind; thread-safe, mergeable."""

    def __init__(self) -> None:
        self._counts: Counts = {}
        self._lock = threading.Lock()

    def count(self, operation: str, kind: str, n: int = 1) -> None:
        with self._lock:
            row = self._counts.setdefault(operation, {})
            row[kind] = row.get(kind, 0) + n

    def add(self, counts: Mapping[str, Mapping[str, int]]) -> None:
        for operation, row in counts.items():
            for kind, n in row.items():
                self.count(operation, kind, n)

    def take(self) -> Counts:
        """The counts so far, and start again from zero."""
        with self._lock:
            taken, self._counts = self._counts, {}
        return taken

    def snapshot(self) -> Counts:
        with self._lock:
            return {operation: dict(row) for operation, row in sorted(self._counts.items())}

    def totals(self) -> dict[str, int]:
        """``calls`` (attempts sent or answered here) and ``faults`` (every kind injected)."""
        rows = self.snapshot().values()
        return {
            CALLS: sum(row.get(CALLS, 0) for row in rows),
            "faults": sum(n for row in rows for kind, n in row.items() if kind != CALLS),
        }

    def summary(self) -> list[str]:
        """One line per faulted operation: its calls and its faults by kind."""
        lines = []
        for operation, row in self.snapshot().items():
            faults = {kind: n for kind, n in row.items() if kind != CALLS}
            if faults:
                kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(faults.items()))
                lines.append(f"{operation}: {row.get(CALLS, 0)} calls; {kinds}")
        return lines


class Injector:
    """The event handlers: decides each fault with its own generator, answers it, counts it."""

    def __init__(
        self,
        rate: float,
        rng: random.Random,
        kinds: Collection[str] = (),
        send: Callable[[AWSPreparedRequest], object] | None = None,
    ) -> None:
        if not 0 <= rate <= 1:
            raise ValueError(f"a fault rate is a probability, not {rate}")
        unknown = set(kinds) - KINDS
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {sorted(KINDS)}")
        self.rate = rate
        self.kinds = frozenset(kinds)
        self.tally = Tally()
        self._rng = rng
        self._lock = threading.Lock()
        self._send = send if send is not None else _served

    def register(self, events: Any) -> None:
        """Hook into an event emitter (a session's: clients made from it afterwards copy them)."""
        for event, handler in self._handlers():
            events.register(event, handler)

    def unregister(self, events: Any) -> None:
        for event, handler in self._handlers():
            events.unregister(event, handler)

    def reseed(self, seed: int, function: str, worker: int) -> None:
        """Draw as worker ``worker`` of ``function`` from now on: a worker restored from a SnapStart
        snapshot inherits the snapshot's generator, which every other restored worker shares."""
        self._rng = generator(seed, function, worker)

    def _handlers(self) -> Iterator[tuple[str, Callable[..., Any]]]:
        yield "before-send", self.before_send
        for operation in _BATCHES:
            service, name = operation.split(".")
            yield f"before-parameter-build.{service}.{name}", self.drop_entries
            yield f"after-call.{service}.{name}", self.report_dropped

    def _draw(self) -> float:
        with self._lock:
            return self._rng.random()

    def _pick[T](self, choices: Sequence[T]) -> T:
        with self._lock:
            return self._rng.choice(choices)

    # -- every attempt

    def before_send(self, request: AWSPreparedRequest, event_name: str, **_: Any) -> AWSResponse | None:
        service, operation = event_name.split(".")[1:3]
        key = f"{service}.{operation}"
        self.tally.count(key, CALLS)
        context = getattr(request, "context", None) or {}  # the request's context, as before-parameter-build saw it
        if context.get(_ALL_DROPPED):
            return _json_response(service, 200, dict(_BATCHES[key]))
        if self._draw() >= self.rate:
            return None
        kinds = self._kinds_of(service, operation)
        if not kinds:
            return None
        fault = self._pick(kinds)
        self.tally.count(key, _name(fault))
        if fault == CONNECTION_RESET:
            raise ConnectionClosedError(endpoint_url=request.url, request=request)
        if fault == READ_TIMEOUT:
            # AWS served the request; the answer never arrived. A retry repeats a write that happened.
            self._send(request)
            raise ReadTimeoutError(endpoint_url=request.url)
        if fault == TRANSACTION_CONFLICT:
            return _json_response(service, 400, self._transaction_conflict(request))
        assert isinstance(fault, ServiceError)
        return _error_response(service, fault)

    def _kinds_of(self, service: str, operation: str) -> list[ServiceError | str]:
        kinds: list[ServiceError | str] = [*_ERRORS.get(service, ()), CONNECTION_RESET, READ_TIMEOUT]
        if service == "dynamodb" and operation == "TransactWriteItems":
            kinds.append(TRANSACTION_CONFLICT)
        if service == "dynamodb" and operation in _SINGLE_ITEM_WRITES:
            kinds.append(_SINGLE_ITEM_CONFLICT)
        if not self.kinds:
            return kinds
        return [kind for kind in kinds if _name(kind) in self.kinds]

    def _transaction_conflict(self, request: AWSPreparedRequest) -> dict[str, Any]:
        # DynamoDB names a reason per item, in order: the conflicting one, "None" for the others.
        body = request.body if isinstance(request.body, bytes | str) else b"{}"
        size = len(json.loads(body or b"{}").get("TransactItems") or [None])
        conflicted = self._pick(range(size))
        reasons = [
            {"Code": TRANSACTION_CONFLICT, "Message": "Transaction is ongoing for the item"}
            if n == conflicted
            else {"Code": "None"}
            for n in range(size)
        ]
        return {
            "__type": f"{_DYNAMODB_NS}TransactionCanceledException",
            "CancellationReasons": reasons,
            "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons "
            f"[{', '.join(r['Code'] for r in reasons)}]",
        }

    # -- partial failures of batch calls

    def drop_entries(self, params: dict[str, Any], event_name: str, context: dict[str, Any], **_: Any) -> None:
        key = ".".join(event_name.split(".")[1:3])
        entries = list(_entries(key, params))
        if not entries or (self.kinds and PARTIAL not in self.kinds) or self._draw() >= self.rate:
            return
        with self._lock:
            dropped = [entry for entry in entries if self._rng.random() < 0.5] or [self._rng.choice(entries)]
        self.tally.count(key, PARTIAL)
        context[_DROPPED] = dropped
        if len(dropped) == len(entries):
            context[_ALL_DROPPED] = True  # nothing is sent: before_send answers an empty success
            return
        gone = {id(entry) for _, _, entry in dropped}
        _keep(key, params, gone)

    def report_dropped(
        self, http_response: Any, parsed: dict[str, Any], context: dict[str, Any], event_name: str, **_: Any
    ) -> None:
        dropped = context.pop(_DROPPED, None)
        context.pop(_ALL_DROPPED, None)
        if not dropped or http_response is None or http_response.status_code >= 300:
            return  # the whole call failed: every entry is the caller's to send again
        _report(".".join(event_name.split(".")[1:3]), parsed, dropped)


# -- the batch calls' entries, by operation


def _entries(key: str, params: Mapping[str, Any]) -> Iterator[tuple[int, Any, Any]]:
    """(position, where, entry) of each entry of a batch request: where is the table (BatchWriteItem),
    the table and its options (BatchGetItem), or nothing (PutEvents, SendMessageBatch)."""
    if key in ("eventbridge.PutEvents", "sqs.SendMessageBatch"):
        yield from ((n, "", entry) for n, entry in enumerate(params.get("Entries") or []))
    elif key == "dynamodb.BatchWriteItem":
        for table, requests in (params.get("RequestItems") or {}).items():
            yield from ((n, table, request) for n, request in enumerate(requests))
    elif key == "dynamodb.BatchGetItem":
        for table, request in (params.get("RequestItems") or {}).items():
            options = {name: value for name, value in request.items() if name != "Keys"}
            yield from ((n, (table, options), k) for n, k in enumerate(request.get("Keys") or []))


def _keep(key: str, params: dict[str, Any], gone: set[int]) -> None:
    """Leave only the entries not ``gone`` in the request (new containers: the caller's stay as given)."""
    if key in ("eventbridge.PutEvents", "sqs.SendMessageBatch"):
        params["Entries"] = [e for e in params["Entries"] if id(e) not in gone]
    elif key == "dynamodb.BatchWriteItem":
        kept = {table: [r for r in requests if id(r) not in gone] for table, requests in params["RequestItems"].items()}
        params["RequestItems"] = {table: requests for table, requests in kept.items() if requests}
    else:
        kept_keys = {
            table: {**request, "Keys": [k for k in request["Keys"] if id(k) not in gone]}
            for table, request in params["RequestItems"].items()
        }
        params["RequestItems"] = {table: request for table, request in kept_keys.items() if request["Keys"]}


def _report(key: str, parsed: dict[str, Any], dropped: list[tuple[int, Any, Any]]) -> None:
    if key == "eventbridge.PutEvents":
        # Results are positional: put a failed result where each dropped entry was.
        results = list(parsed.get("Entries") or [])
        for position, _, _ in sorted(dropped):
            results.insert(position, {"ErrorCode": "InternalFailure", "ErrorMessage": "Internal failure (injected)"})
        parsed["Entries"] = results
        parsed["FailedEntryCount"] = int(parsed.get("FailedEntryCount") or 0) + len(dropped)
    elif key == "sqs.SendMessageBatch":
        failed = [
            {"Id": entry["Id"], "SenderFault": False, "Code": "InternalError", "Message": "Internal error (injected)"}
            for _, _, entry in dropped
        ]
        parsed["Failed"] = [*(parsed.get("Failed") or []), *failed]
        parsed.setdefault("Successful", [])
    elif key == "dynamodb.BatchWriteItem":
        unprocessed = parsed.setdefault("UnprocessedItems", {})
        for _, table, request in dropped:
            unprocessed.setdefault(table, []).append(request)
    elif key == "dynamodb.BatchGetItem":
        # Unprocessed keys come back with their table's options (ConsistentRead, projection), as sent.
        unprocessed = parsed.setdefault("UnprocessedKeys", {})
        for _, (table, options), k in dropped:
            unprocessed.setdefault(table, {**options, "Keys": []})["Keys"].append(k)
        parsed.setdefault("Responses", {})


# -- answers as the services send them


@cache
def _http() -> URLLib3Session:
    return URLLib3Session()


def _served(request: AWSPreparedRequest) -> bytes:
    """Send ``request`` for real and read its answer to the end (then drop it)."""
    return _http().send(request).content


def _headers(values: Mapping[str, str]) -> HTTPHeaders:
    headers = HTTPHeaders()
    for name, value in values.items():
        headers[name] = value
    return headers


class _Body:
    """What botocore reads a response's body from (urllib3's response in real life)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._data

    def read(self, *_: Any) -> bytes:
        data, self._data = self._data, b""
        return data

    def close(self) -> None:
        pass


def _json_response(service: str, status: int, document: Mapping[str, Any]) -> AWSResponse:
    body = json.dumps(document, separators=(",", ":")).encode()
    headers = {
        "x-amzn-RequestId": str(uuid.uuid4()),
        "Content-Type": f"application/x-amz-json-{_JSON_VERSIONS.get(service, '1.0')}",
        "Content-Length": str(len(body)),
    }
    if service == "dynamodb":
        headers["x-amz-crc32"] = str(zlib.crc32(body))  # botocore checks it, as against corruption in flight
    if service == "sqs" and status >= 300:
        # SQS speaks JSON but keeps its query-protocol error codes in this header.
        code = str(document["__type"]).rpartition("#")[2]
        headers["x-amzn-query-error"] = f"{code};{'Sender' if status < 500 else 'Receiver'}"
    return AWSResponse("https://local-faults/", status, _headers(headers), _Body(body))


def _error_response(service: str, error: ServiceError) -> AWSResponse:
    if service == "s3":
        request_id = uuid.uuid4().hex[:16].upper()
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Error><Code>{error.code}</Code><Message>{error.message}</Message>"
            f"<RequestId>{request_id}</RequestId><HostId>local-faults</HostId></Error>"
        ).encode()
        headers = {"x-amz-request-id": request_id, "Content-Type": "application/xml", "Content-Length": str(len(body))}
        return AWSResponse("https://local-faults/", error.status, _headers(headers), _Body(body))
    return _json_response(service, error.status, {"__type": f"{error.namespace}{error.code}", "message": error.message})


# -- installation in a function's process


@dataclass(frozen=True)
class FaultSettings:
    """What the stack's ``--faults``, ``--fault-seed`` and ``--fault-kinds`` ask of every worker."""

    rate: float
    seed: int
    kinds: tuple[str, ...] = ()  # empty: every kind

    def for_worker(self, function: str, worker: int) -> dict[str, Any]:
        """The worker's ``faults`` configuration (``local/worker.py`` loads this file by its path)."""
        return {
            "module": __file__,
            "rate": self.rate,
            "seed": self.seed,
            "function": function,
            "worker": worker,
            "kinds": list(self.kinds),
        }


def generator(seed: int, function: str, worker: int) -> random.Random:
    """The generator of one worker process: the same seed, function and worker draw the same faults."""
    return random.Random(f"{seed}:{function}:{worker}")


def install(rate: float, seed: int, function: str, worker: int, kinds: Sequence[str] = ()) -> Injector:
    """Inject faults into every client boto3's default session makes from now on (call it before
    the handler is imported: the function's clients are made at init or on first use)."""
    import boto3

    boto3.setup_default_session()
    injector = Injector(rate, generator(seed, function, worker), kinds)
    assert boto3.DEFAULT_SESSION is not None
    injector.register(boto3.DEFAULT_SESSION.events)
    return injector
