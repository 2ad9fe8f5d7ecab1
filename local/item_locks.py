"""DynamoDB's per-item transaction conflicts in front of DynamoDB Local, which never answers one.

DynamoDB Local applies transactions one at a time, so two orders racing for one stock item both
succeed there, one after the other. DynamoDB does not queue them: a TransactWriteItems that reaches
an item another transaction holds is cancelled with ``TransactionConflict`` for that item (and
``None`` for the others), and the caller retries. ``ItemLocks`` is a small HTTP proxy that puts that
rule back: every item of a TransactWriteItems is held from the moment the proxy forwards it until
DynamoDB Local answers, and a transaction that reaches a held item is answered the cancellation
DynamoDB would send, without reaching the engine. The conflicts then come from real concurrency
(processes racing on the same item), not from a coin: a hot item conflicts, items apart do not.

It is a proxy rather than a botocore hook (``local/faults.py``) because the racing callers are
separate processes (Lambda containers, see ``local/harness/race.py``): one proxy sees all of them,
and it records every transaction's items and outcome where the benchmark can read them.

Not emulated: single-item writes meeting a held item (``TransactionConflictException``); a hold is
as long as DynamoDB Local takes to answer (longer than DynamoDB's under load), so it conflicts more,
never less, than DynamoDB would for the same concurrency.
"""

import http.client
import json
import threading
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

ItemKey = tuple[str, str, str]
"""(table, PK, SK) of an item a transaction writes or checks."""

_TRANSACT: Final = "DynamoDB_20120810.TransactWriteItems"
_NAMESPACE: Final = "com.amazonaws.dynamodb.v20120810#"
_HOP_BY_HOP: Final = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host"})


@dataclass(frozen=True)
class Attempt:
    """One TransactWriteItems as the proxy saw it: its items, the one it conflicted on (if it did), and
    whether DynamoDB Local applied it (a forwarded transaction can still be cancelled by a condition)."""

    items: tuple[ItemKey, ...]
    conflicted: ItemKey | None
    applied: bool = False


def transaction_items(body: dict[str, Any]) -> list[ItemKey]:
    """The items of a TransactWriteItems request, in request order (a reason per item, in that order)."""
    found = []
    for action in body.get("TransactItems") or []:
        ((_, operation),) = action.items()
        key = operation.get("Key") or operation.get("Item") or {}
        found.append((operation["TableName"], _plain(key.get("PK")), _plain(key.get("SK"))))
    return found


def _plain(value: dict[str, str] | None) -> str:
    return next(iter(value.values())) if value else ""


def cancellation(items: list[ItemKey], conflicted: ItemKey) -> dict[str, Any]:
    """The body DynamoDB answers a transaction cancelled by a conflict on one of its items."""
    reasons = [
        {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
        if item == conflicted
        else {"Code": "None"}
        for item in items
    ]
    return {
        "__type": f"{_NAMESPACE}TransactionCanceledException",
        "CancellationReasons": reasons,
        "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons "
        f"[{', '.join(r['Code'] for r in reasons)}]",
    }


class ItemLocks:
    """The held items and the log of transactions; thread-safe."""

    def __init__(self) -> None:
        self._held: set[ItemKey] = set()
        self._lock = threading.Lock()
        self.attempts: list[Attempt] = []

    def hold(self, items: list[ItemKey]) -> ItemKey | None:
        """Hold every item, or none and answer (and log) the first one another transaction holds."""
        with self._lock:
            conflicted = next((item for item in items if item in self._held), None)
            if conflicted is None:
                self._held.update(items)
            else:
                self.attempts.append(Attempt(tuple(items), conflicted))
            return conflicted

    def release(self, items: list[ItemKey], applied: bool) -> None:
        """Let the items go once DynamoDB Local answered, and log the transaction (``applied``: it said 200)."""
        with self._lock:
            self._held.difference_update(items)
            self.attempts.append(Attempt(tuple(items), None, applied))

    def take(self) -> list[Attempt]:
        """The transactions seen so far, and start the log again."""
        with self._lock:
            taken, self.attempts = self.attempts, []
        return taken


def _handler(engine: str, locks: ItemLocks) -> type[BaseHTTPRequestHandler]:
    host, port = engine.removeprefix("http://").split(":")
    connections = threading.local()

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the SDK's connection pool reuses its connections

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            items = transaction_items(json.loads(body)) if self.headers.get("X-Amz-Target") == _TRANSACT else []
            conflicted = locks.hold(items) if items else None
            if conflicted is not None:
                self._answer(400, {"Content-Type": "application/x-amz-json-1.0"}, cancellation(items, conflicted))
                return
            status = 0
            try:
                status, headers, answer = self._forward(body)
            finally:
                if items:
                    locks.release(items, applied=status == 200)
            self._send(status, headers, answer)

        def _forward(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
            if not hasattr(connections, "engine"):
                connections.engine = http.client.HTTPConnection(host, int(port), timeout=120)
            headers = {name: value for name, value in self.headers.items() if name.lower() not in _HOP_BY_HOP}
            connections.engine.request("POST", self.path, body, headers)
            response = connections.engine.getresponse()
            answer = response.read()
            kept = {name: value for name, value in response.getheaders() if name.lower() not in _HOP_BY_HOP}
            return response.status, kept, answer

        def _answer(self, status: int, headers: dict[str, str], document: dict[str, Any]) -> None:
            body = json.dumps(document, separators=(",", ":")).encode()
            # botocore checks the CRC of a DynamoDB answer, as against corruption in flight.
            self._send(
                status, {**headers, "x-amzn-RequestId": str(uuid.uuid4()), "x-amz-crc32": str(zlib.crc32(body))}, body
            )

        def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a line per request on stderr would bury the benchmark's progress

    return Forward


@contextmanager
def item_locks(engine: str) -> Iterator[tuple[str, ItemLocks]]:
    """A proxy to ``engine`` (DynamoDB Local's endpoint) with per-item conflicts: its endpoint, its locks."""
    locks = ItemLocks()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(engine, locks))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="item-locks", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", locks
    finally:
        server.shutdown()
        server.server_close()
