"""The local stack's HTTP server: the API on 127.0.0.1:PORT plus the stack's own ``/__local/`` pages.

``/__local/health`` (200 once seeded and ready, 503 before), ``/__local/stack`` (endpoints, resources,
pollers), ``/__local/openapi.json`` and ``/__local/docs`` (Swagger UI), the local issuer's OpenID
documents, ``POST /__local/schedules/<FunctionLogicalId>`` (run a scheduled function now) and
``GET /__local/queues/<QueueLogicalId>`` (peek at a queue, so curl can show where events land) and
``GET /__local/buckets/<BucketLogicalId>[/<key>]`` (a bucket's objects, or one object's bytes: the moto
server refuses unsigned object reads, so this is how curl shows what landed in S3), and the email sink:
``POST /__local/ses/v2/email/outbound-emails`` (SES's SendEmail, the functions' SES endpoint) and
``GET /__local/mail`` (what was sent: to, subject, body, event id; see local/mail.py).
Every other request goes to the API Gateway emulation. One log line per request.
"""

import functools
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from local.auth import SigningKey, discovery_document
from local.gateway import ApiGateway, HttpRequest, HttpResponse
from local.mail import SEND_PATH, MailSink
from local.schedules import Scheduler

log = logging.getLogger("local.api")

PREFIX = "/__local"
# API Gateway HTTP API refuses payloads above 10 MB; so does the local one, before reading them.
MAX_BODY_BYTES = 10 * 1024 * 1024
# Enough for every client a load test or a fuzzer opens at once (the socketserver default is 5:
# 7-15 % of connections were reset at 50 concurrent clients). The kernel caps it at somaxconn.
LISTEN_BACKLOG = 1024
# A client that stops sending mid-request frees its thread after this long.
SOCKET_TIMEOUT_S = 60
# http.server's own limits on a request's head, kept: a longer line is a 431, as are more header fields.
MAX_LINE_BYTES = 65536
MAX_HEADER_FIELDS = 100
_VERSION = re.compile(r"HTTP/(\d{1,10})\.(\d{1,10})")
# The hosts a browser may call the stack pages by: any other Host header is a page of another site
# that made its name resolve to 127.0.0.1 (DNS rebinding), and must not read the stack's events.
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
# Swagger UI's pinned copy (package.json), served by the stack: the page works without internet.
SWAGGER_UI_DIR = Path(__file__).resolve().parent.parent / "node_modules" / "swagger-ui-dist"
_SWAGGER_UI_FILES = {"swagger-ui.css": "text/css", "swagger-ui-bundle.js": "text/javascript"}
_SWAGGER_UI = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>shopfeed API (local)</title>
  <link rel="stylesheet" href="/__local/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/__local/docs/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({url: "/__local/openapi.json", dom_id: "#swagger-ui", persistAuthorization: true});
  </script>
</body>
</html>
"""


@functools.lru_cache(maxsize=1)
def http_date(second: int) -> str:
    """The Date field of an answer given in ``second`` (epoch), formatted once for all that second's
    answers: http.server formats it anew for each (email.utils.formatdate, 2.1 µs against 0.1)."""
    return formatdate(second, usegmt=True)


def is_local_host(host: str | None) -> bool:
    """Whether a Host header names this machine by a loopback name (any port)."""
    return bool(host) and urlsplit(f"//{host}").hostname in _LOCAL_HOSTS


@dataclass
class LocalPages:
    """What the ``/__local/`` pages answer from."""

    ready: threading.Event
    issuer: str
    signing_key: SigningKey
    describe: Callable[[], dict[str, Any]]
    scheduler: Scheduler
    openapi_file: Path
    base_url: str
    peek_queue: Callable[[str], list[Any] | None] = lambda logical_id: None
    # (bucket logical id, key prefix) -> the objects' keys and sizes; (logical id, key) -> body, type
    list_bucket: Callable[[str, str], list[dict[str, Any]] | None] = lambda logical_id, prefix: None
    read_object: Callable[[str, str], tuple[bytes, str] | None] = lambda logical_id, key: None
    mail: MailSink = field(default_factory=MailSink)

    def handle(self, request: HttpRequest) -> HttpResponse:
        path = urlsplit(request.target).path
        route = path[len(PREFIX) :]
        if request.method == "GET":
            if route == "/health":
                ready = self.ready.is_set()
                return HttpResponse.json(200 if ready else 503, {"status": "ready" if ready else "starting"})
            if route == "/stack":
                return HttpResponse.json(200, self.describe())
            if route == "/openapi.json":
                return self._openapi()
            if route == "/docs":
                return HttpResponse(200, [("content-type", "text/html; charset=utf-8")], _SWAGGER_UI.encode())
            if route.startswith("/docs/") and route.removeprefix("/docs/") in _SWAGGER_UI_FILES:
                return _swagger_ui_file(route.removeprefix("/docs/"))
            if route == "/issuer/.well-known/openid-configuration":
                return HttpResponse.json(200, discovery_document(self.issuer))
            if route == "/issuer/.well-known/jwks.json":
                return HttpResponse.json(200, self.signing_key.jwks())
            if route == "/schedules":
                return HttpResponse.json(200, {"schedules": self.scheduler.describe()})
            if route.startswith("/queues/"):
                queue = route.removeprefix("/queues/")
                messages = self.peek_queue(queue)
                if messages is None:
                    return HttpResponse.json(404, {"message": f"no queue {queue} in the template"})
                return HttpResponse.json(200, {"queue": queue, "messages": messages})
            if route.startswith("/buckets/"):
                return self._bucket(route.removeprefix("/buckets/"), parse_qs(urlsplit(request.target).query))
            if route == "/mail":
                return HttpResponse.json(200, {"messages": self.mail.listed()})
        if request.method == "POST" and route.startswith("/schedules/"):
            return self._run_schedule(route.removeprefix("/schedules/"))
        if request.method == "POST" and route == SEND_PATH:
            return self.mail.send_email(request)
        return HttpResponse.json(404, {"message": "Not Found"})

    def _bucket(self, path: str, query: dict[str, list[str]]) -> HttpResponse:
        bucket, _, key = path.partition("/")
        if not key:
            objects = self.list_bucket(bucket, (query.get("prefix") or [""])[0])
            if objects is None:
                return HttpResponse.json(404, {"message": f"no bucket {bucket} in the template"})
            return HttpResponse.json(200, {"bucket": bucket, "objects": objects})
        found = self.read_object(bucket, unquote(key))
        if found is None:
            return HttpResponse.json(404, {"message": f"no object {key} in {bucket}"})
        body, content_type = found
        return HttpResponse(200, [("content-type", content_type)], body)

    def _openapi(self) -> HttpResponse:
        if not self.openapi_file.is_file():
            return HttpResponse.json(404, {"message": f"{self.openapi_file.name} is missing: run `make openapi`"})
        document = json.loads(self.openapi_file.read_text())
        document["servers"] = [{"url": self.base_url, "description": "local stack"}]  # for "Try it out"
        return HttpResponse.json(200, document)

    def _run_schedule(self, function: str) -> HttpResponse:
        if function not in self.scheduler.functions:
            return HttpResponse.json(404, {"message": f"{function} has no schedule", "known": self.scheduler.functions})
        result = self.scheduler.run_now(function)
        document = {"function": function, "duration_ms": round(result.duration_ms, 1)}
        if result.failed:
            return HttpResponse.json(502, document | {"error": result.error_type, "message": result.error_message})
        return HttpResponse.json(200, document | {"result": result.payload})


def _swagger_ui_file(name: str) -> HttpResponse:
    path = SWAGGER_UI_DIR / name
    if not path.is_file():
        return HttpResponse.json(404, {"message": f"{path} is missing: run `make deps` (npm ci)"})
    return HttpResponse(
        200, [("content-type", _SWAGGER_UI_FILES[name]), ("cache-control", "max-age=3600")], path.read_bytes()
    )


class LocalServer(ThreadingHTTPServer):
    """A threading HTTP server whose requests go to the local pages or the API."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], gateway: ApiGateway, pages: LocalPages) -> None:
        super().__init__(address, _Handler)
        self.gateway = gateway
        self.pages = pages

    def dispatch(self, request: HttpRequest) -> HttpResponse:
        path = urlsplit(request.target).path
        if path == PREFIX or path.startswith(PREFIX + "/"):
            host = next((v for k, v in request.headers if k.lower() == "host"), None)
            if not is_local_host(host):
                return HttpResponse.json(403, {"message": f"{PREFIX}/ answers only to localhost or 127.0.0.1"})
            return self.pages.handle(request)
        return self.gateway.handle(request)


class Headers:
    """A request's header fields in the order they came, looked up by name without regard to case."""

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._fields = fields

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields)

    def get_all(self, name: str) -> list[str]:
        wanted = name.lower()
        return [value for key, value in self._fields if key.lower() == wanted]

    def get(self, name: str, default: str = "") -> str:
        return next(iter(self.get_all(name)), default)


def read_head(lines: Callable[[], bytes]) -> Headers:
    """The header fields up to the empty line, read one line at a time (RFC 9112 §5: a name, a colon, a
    value, on one line). Raises _BadRequest: 431 for a line or a head too long, 400 for a malformed field
    (a line with no name or no colon, whitespace before the colon, or an obsolete folded line)."""
    fields: list[tuple[str, str]] = []
    while True:
        line = lines()
        if len(line) > MAX_LINE_BYTES:
            raise _BadRequest(431, "Line too long")
        if line in (b"\r\n", b"\n", b""):
            return Headers(fields)
        if len(fields) >= MAX_HEADER_FIELDS:
            raise _BadRequest(431, "Too many headers")
        name, colon, value = line.decode("iso-8859-1").partition(":")
        if not colon or not name or name != name.strip() or line[:1] in (b" ", b"\t"):
            raise _BadRequest(400, "malformed header field")
        fields.append((name, value.strip(" \t\r\n")))


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse one connection for many requests
    # Without it each response waits ~40 ms for the client's delayed ACK (Nagle), on every request.
    disable_nagle_algorithm = True
    timeout = SOCKET_TIMEOUT_S
    server: LocalServer
    fields: Headers
    raw_requestline: bytes  # set by http.server's handle_one_request before parse_request

    def parse_request(self) -> bool:
        """The request line and header fields, as http.server's parse_request reads them but without the
        email package: its parser was a quarter of the stack's CPU per request, and an HTTP head needs
        none of what it does for mail (MIME, defects, policies). Errors are answered as JSON, then closed."""
        self.command = None  # type: ignore[assignment]  # http.server's marker for "no request line yet"
        self.request_version = self.default_request_version
        self.close_connection = True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if not words:
            return False
        try:
            if len(words) != 3:
                raise _BadRequest(400, f"Bad request syntax ({self.requestline!r})")
            command, path, version = words
            number = _VERSION.fullmatch(version)
            if number is None:
                raise _BadRequest(400, f"Bad request version ({version!r})")
            major_minor = int(number[1]), int(number[2])
            if major_minor >= (2, 0):
                raise _BadRequest(505, f"Invalid HTTP version ({version})")
            self.command, self.request_version = command, version
            # As http.server: a path starting with // would read as a host to an HTTP client (gh-87389).
            self.path = "/" + path.lstrip("/") if path.startswith("//") else path
            self.fields = read_head(lambda: self.rfile.readline(MAX_LINE_BYTES + 1))
        except _BadRequest as refusal:
            self.close_connection = True
            self._send(HttpResponse.json(refusal.status, {"message": str(refusal)}))
            return False
        connection = self.fields.get("connection").lower()
        # HTTP/1.1 keeps a connection open unless told otherwise; HTTP/1.0 closes it unless told otherwise.
        self.close_connection = connection == "close" or (major_minor < (1, 1) and connection != "keep-alive")
        if self.fields.get("expect").lower() == "100-continue" and major_minor >= (1, 1):
            return self.handle_expect_100()
        return True

    def _serve(self) -> None:
        started = time.monotonic()
        try:
            body = self._body()
        except _BadRequest as refusal:
            # The rest of the request cannot be told from the next one: answer, then close.
            self.close_connection = True
            self._send(HttpResponse.json(refusal.status, {"message": str(refusal)}))
            return
        request = HttpRequest(
            method=self.command,
            target=self.path,
            headers=self.fields.items(),
            body=body,
            source_ip=self.client_address[0],
        )
        response = self.server.dispatch(request)
        if not request.target.startswith(PREFIX + "/health"):  # readiness probes would drown the log
            elapsed = (time.monotonic() - started) * 1000
            log.info("%s %s %d %.0fms", request.method, request.target, response.status, elapsed)
        self._send(response)

    def _send(self, response: HttpResponse) -> None:
        # Status line, headers and body in one write: one TCP segment for a small response, where
        # send_response/send_header/end_headers and a body write make two.
        reason = self.responses.get(response.status, ("",))[0]
        lines = [
            f"{self.protocol_version} {response.status} {reason}",
            f"server: {self.version_string()}",
            f"date: {http_date(int(time.time()))}",
            *(f"{name}: {value}" for name, value in response.headers),
            f"content-length: {len(response.body)}",
        ]
        if self.close_connection:
            lines.append("connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")
        self.wfile.write(head if self.command == "HEAD" else head + response.body)

    def _body(self) -> bytes:
        """The request body, read no further than its declared size (at most MAX_BODY_BYTES)."""
        if self.fields.get("transfer-encoding").lower() == "chunked":
            return self._chunked()
        declared = self.fields.get_all("content-length")
        if not declared:
            return b""
        if len(set(declared)) > 1 or not declared[0].strip().isdigit():
            raise _BadRequest(400, "invalid Content-Length")
        length = int(declared[0])
        if length > MAX_BODY_BYTES:
            raise _BadRequest(413, "Request Entity Too Large")
        return self._read(length)

    def _chunked(self) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            size_text = self.rfile.readline(1024).split(b";")[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise _BadRequest(400, "invalid chunk size") from None
            if size < 0:
                raise _BadRequest(400, "invalid chunk size")
            total += size
            if total > MAX_BODY_BYTES:
                raise _BadRequest(413, "Request Entity Too Large")
            if size == 0:
                break
            chunks.append(self._read(size))
            self.rfile.readline(1024)
        while self.rfile.readline(8192).strip():  # trailers
            pass
        return b"".join(chunks)

    def _read(self, size: int) -> bytes:
        data = self.rfile.read(size)
        if len(data) < size:
            raise _BadRequest(400, "the body is shorter than its Content-Length")
        return data

    # Every method goes through the gateway, as API Gateway takes them all: one with no route is its 404,
    # never http.server's 501 for a method it has no do_ method for.
    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_TRACE = do_CONNECT = _serve

    def log_message(self, format: str, *args: Any) -> None:
        """Silenced: ``_serve`` logs one line per request, with its duration."""
