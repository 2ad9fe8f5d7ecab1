"""The benchmarks' HTTP client (bench/clients.py ``OverHttp``): each call sends one whole request and reads
exactly one answer, so the next answer on the connection is the next request's, and an answer that closes
the connection is followed by a new one."""

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from bench.clients import OverHttp, Request


class _Echo(BaseHTTPRequestHandler):
    """Answers with the request it got, as JSON; ``/close`` answers with ``connection: close``."""

    protocol_version = "HTTP/1.1"
    server: "_Server"

    def _answer(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        self.server.seen.append((self.command, self.path, dict(self.headers), body, self.client_address[1]))
        status = int(self.path.rsplit("/", 1)[1]) if self.path.startswith("/status/") else 200
        answer = json.dumps({"path": self.path, "padding": "x" * 5000}).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        if self.path == "/close":
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(answer)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, str, dict[str, str], bytes, int]]


@dataclass(frozen=True)
class _Script:
    requests: tuple[Request, ...]

    def of(self, client: int) -> Iterator[Request]:
        return iter(self.requests)


@pytest.fixture
def server() -> Iterator[_Server]:
    running = _Server(("127.0.0.1", 0), _Echo)
    running.seen = []
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    yield running
    running.shutdown()
    running.server_close()


def _client(server: _Server, *requests: Request) -> Any:
    host, port = server.server_address[:2]
    return OverHttp(_Script(requests), f"http://{host}:{port}", "T0KEN", 200).prepare(0, 1)


def test_each_call_answers_its_own_request_on_one_kept_alive_connection(server: _Server) -> None:
    # given a client with a read, a write with a body and a header, and a read answered 404
    call = _client(
        server,
        ("GET", "/products/P-1", None, {}),
        ("POST", "/orders", {"sku": "S-1"}, {"Idempotency-Key": "K-1"}),
        ("GET", "/status/404", None, {}),
    )
    # when it calls three times
    statuses = [call(), call(), call()]
    # then each call got its own answer, over one connection
    assert statuses == [200, 200, 404]
    assert [(method, path) for method, path, *_ in server.seen] == [
        ("GET", "/products/P-1"),
        ("POST", "/orders"),
        ("GET", "/status/404"),
    ]
    assert len({port for *_, port in server.seen}) == 1
    # and the write carried its body, its type, its own header and the bearer token
    _, _, headers, body, _ = server.seen[1]
    assert json.loads(body) == {"sku": "S-1"}
    assert headers["Content-Type"] == "application/json"
    assert headers["Idempotency-Key"] == "K-1"
    assert all(h["Authorization"] == "Bearer T0KEN" for _, _, h, _, _ in server.seen)


def test_an_answer_that_closes_the_connection_is_followed_by_a_new_one(server: _Server) -> None:
    # given a client whose second request is answered with connection: close
    call = _client(server, ("GET", "/a", None, {}), ("GET", "/close", None, {}), ("GET", "/b", None, {}))
    # when it calls three times
    statuses = [call(), call(), call()]
    # then the third request went out on a new connection and was answered
    assert statuses == [200, 200, 200]
    ports = [port for *_, port in server.seen]
    assert ports[0] == ports[1] != ports[2]
