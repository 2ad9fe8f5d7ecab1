"""The local stack's HTTP server: the API on 127.0.0.1:PORT plus the stack's own ``/__local/`` pages.

``/__local/health`` (200 once seeded and ready, 503 before), ``/__local/stack`` (endpoints, resources,
pollers), ``/__local/openapi.json`` and ``/__local/docs`` (Swagger UI), the local issuer's OpenID
documents, ``POST /__local/schedules/<FunctionLogicalId>`` (run a scheduled function now) and
``GET /__local/queues/<QueueLogicalId>`` (peek at a queue, so curl can show where events land).
Every other request goes to the API Gateway emulation. One log line per request.
"""

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from local.auth import SigningKey, discovery_document
from local.gateway import ApiGateway, HttpRequest, HttpResponse
from local.schedules import Scheduler

log = logging.getLogger("local.api")

PREFIX = "/__local"
_SWAGGER_UI = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>shopfeed API (local)</title>
  <link rel="stylesheet" href="https://unpkg.com/swagger-ui-dist@5/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="https://unpkg.com/swagger-ui-dist@5/swagger-ui-bundle.js" crossorigin></script>
  <script>
    window.ui = SwaggerUIBundle({url: "/__local/openapi.json", dom_id: "#swagger-ui", persistAuthorization: true});
  </script>
</body>
</html>
"""


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
        if request.method == "POST" and route.startswith("/schedules/"):
            return self._run_schedule(route.removeprefix("/schedules/"))
        return HttpResponse.json(404, {"message": "Not Found"})

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


class LocalServer(ThreadingHTTPServer):
    """A threading HTTP server whose requests go to the local pages or the API."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], gateway: ApiGateway, pages: LocalPages) -> None:
        super().__init__(address, _Handler)
        self.gateway = gateway
        self.pages = pages

    def dispatch(self, request: HttpRequest) -> HttpResponse:
        path = urlsplit(request.target).path
        if path == PREFIX or path.startswith(PREFIX + "/"):
            return self.pages.handle(request)
        return self.gateway.handle(request)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse one connection for many requests
    server: LocalServer

    def _serve(self) -> None:
        started = time.monotonic()
        request = HttpRequest(
            method=self.command,
            target=self.path,
            headers=list(self.headers.items()),
            body=self._body(),
            source_ip=self.client_address[0],
        )
        response = self.server.dispatch(request)
        if not request.target.startswith(PREFIX + "/health"):  # readiness probes would drown the log
            elapsed = (time.monotonic() - started) * 1000
            log.info("%s %s %d %.0fms", request.method, request.target, response.status, elapsed)
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        self.send_header("content-length", str(len(response.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def _body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers
                pass
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

    def log_message(self, format: str, *args: Any) -> None:
        """Silenced: ``_serve`` logs one line per request, with its duration."""
