"""The local HTTP server under the load and the inputs a fuzzer or a hostile page sends it."""

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from local.auth import SigningKey
from local.cfn import HttpRoute
from local.dynamodb_local import free_port
from local.gateway import ApiGateway
from local.lambdas import LocalFunction
from local.schedules import Scheduler
from local.server import LocalPages, LocalServer, http_date
from tests.support.servers import serve_in_thread

CLIENTS = 50
ANSWER_TIMEOUT_S = 10  # a bound for a hung server, never reached by a healthy one


def echo(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return {"statusCode": 200, "body": json.dumps({"length": len(event.get("body") or "")})}


@pytest.fixture
def local_server(tmp_path: Path) -> Iterator[LocalServer]:
    """A server bound to a free port with one API route (POST /echo); not serving until a test says so."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    openapi = tmp_path / "openapi.json"
    openapi.write_text(json.dumps({"openapi": "3.1.0", "paths": {"/echo": {"post": {"operationId": "echo"}}}}))
    ready = threading.Event()
    ready.set()
    key = SigningKey.load_or_create(tmp_path)
    pages = LocalPages(ready, url, key, lambda: {"api": url}, Scheduler([]), openapi, url)
    gateway = ApiGateway([HttpRoute("POST", "/echo", "Echo", None)], {"Echo": LocalFunction("Echo", echo).invoke}, {})
    server = LocalServer(("127.0.0.1", port), gateway, pages)
    server.started = threading.Event()
    yield server
    if server.started.is_set():  # shutdown() waits for a serve_forever that never began otherwise
        server.shutdown()
    server.server_close()


def serve(server: LocalServer) -> str:
    serve_in_thread(server)
    server.started.set()
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}"


@pytest.fixture
def serving(local_server: LocalServer) -> str:
    return serve(local_server)


def raw_request(server: str, request: bytes) -> bytes:
    """Sends ``request`` as is and returns what the server answers before closing or going quiet."""
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=ANSWER_TIMEOUT_S) as connection:
        connection.sendall(request)
        return connection.recv(65536)


def test_fifty_clients_connecting_at_once_are_all_queued_and_served(local_server: LocalServer) -> None:
    # given fifty clients that connect at the same moment, before the server accepts any of them
    host, port = local_server.server_address[:2]

    def connect(_: int) -> socket.socket:
        return socket.create_connection((str(host), port), timeout=5)

    with ThreadPoolExecutor(CLIENTS) as pool:
        connections = list(pool.map(connect, range(CLIENTS)))

    # when the server starts accepting and each sends a request
    serve(local_server)

    def ask(connection: socket.socket) -> bytes:
        with connection:
            connection.settimeout(ANSWER_TIMEOUT_S)
            connection.sendall(b"GET /__local/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return connection.recv(4096).split(b"\r\n")[0]

    with ThreadPoolExecutor(CLIENTS) as pool:
        answers = list(pool.map(ask, connections))

    # then every connection was kept in the listen queue and got its answer
    assert answers == [b"HTTP/1.1 200 OK"] * CLIENTS


@pytest.mark.parametrize("length", ["-1", "abc", "1, 2", "1e3"])
def test_an_invalid_content_length_is_a_400_at_once(serving: str, length: str) -> None:
    request = f"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {length}\r\n\r\n{{}}".encode()
    assert raw_request(serving, request).startswith(b"HTTP/1.1 400 ")


def test_a_body_larger_than_api_gateway_takes_is_refused_before_it_is_read(serving: str) -> None:
    request = b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000000\r\n\r\n{}"
    assert raw_request(serving, request).startswith(b"HTTP/1.1 413 ")


def test_a_body_shorter_than_its_content_length_is_a_400_once_the_client_stops_sending(serving: str) -> None:
    host, port = serving.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=ANSWER_TIMEOUT_S) as connection:
        connection.sendall(b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n{}")
        connection.shutdown(socket.SHUT_WR)
        assert connection.recv(4096).startswith(b"HTTP/1.1 400 ")


def test_bodies_are_read_by_content_length_and_by_chunks(serving: str) -> None:
    with requests.Session() as http:
        plain = http.post(f"{serving}/echo", data=b"x" * 1000, timeout=ANSWER_TIMEOUT_S)
        chunked = http.post(f"{serving}/echo", data=iter([b"x" * 600, b"y" * 400]), timeout=ANSWER_TIMEOUT_S)
    assert (plain.json(), chunked.json()) == ({"length": 1000}, {"length": 1000})


def test_an_invalid_chunk_size_is_a_400(serving: str) -> None:
    request = b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nxx\r\n0\r\n\r\n"
    assert raw_request(serving, request).startswith(b"HTTP/1.1 400 ")


@pytest.mark.parametrize("host", ["rebind.example", "127.0.0.1.nip.io", "localhost.rebind.example:3000"])
def test_the_stack_pages_refuse_a_foreign_host(serving: str, host: str) -> None:
    # given a page of another site whose name resolves to 127.0.0.1 (DNS rebinding)
    # when it reads the stack pages
    response = requests.get(f"{serving}/__local/stack", headers={"Host": host}, timeout=ANSWER_TIMEOUT_S)

    # then the stack refuses, and answers the same request by a local name
    assert response.status_code == 403
    assert requests.get(f"{serving}/__local/stack", headers={"Host": "localhost:3000"}, timeout=5).status_code == 200


def test_the_api_answers_whatever_the_host(serving: str) -> None:
    response = requests.post(f"{serving}/echo", headers={"Host": "api.example"}, data="{}", timeout=5)
    assert response.status_code == 200


def test_the_swagger_ui_page_loads_its_scripts_from_the_stack(serving: str) -> None:
    # when the docs page and what it links to are fetched
    with requests.Session() as http:
        page = http.get(f"{serving}/__local/docs", timeout=5).text
        script = http.get(f"{serving}/__local/docs/swagger-ui-bundle.js", timeout=5)
        style = http.get(f"{serving}/__local/docs/swagger-ui.css", timeout=5)

    # then nothing comes from another origin, and the pinned copy is served
    assert "https://" not in page
    assert "/__local/docs/swagger-ui-bundle.js" in page
    assert (script.status_code, script.headers["content-type"]) == (200, "text/javascript")
    assert "SwaggerUIBundle" in script.text
    assert style.status_code == 200


@pytest.mark.parametrize("method", ["TRACE", "CONNECT"])
def test_a_method_with_no_route_is_the_gateways_404_not_a_5xx(serving: str, method: str) -> None:
    # when
    answer = requests.request(method, f"{serving}/echo", timeout=ANSWER_TIMEOUT_S)
    # then
    assert answer.status_code == 404


def test_the_bucket_pages_list_a_templates_bucket_and_serve_an_objects_bytes(local_server: LocalServer) -> None:
    # given a bucket of the template holding one object (the moto server would refuse curl's unsigned read)
    objects = {"orders/month=2026-08/01B.jsonl": b'{"PK":"ORDER#1"}\n'}

    def list_bucket(bucket: str, prefix: str) -> list[dict[str, Any]] | None:
        if bucket != "ArchiveBucket":
            return None
        return [{"key": key, "size": len(body)} for key, body in objects.items() if key.startswith(prefix)]

    def read_object(bucket: str, key: str) -> tuple[bytes, str] | None:
        body = objects.get(key) if bucket == "ArchiveBucket" else None
        return None if body is None else (body, "application/x-ndjson")

    local_server.pages.list_bucket, local_server.pages.read_object = list_bucket, read_object
    url = serve(local_server)

    # when
    listing = requests.get(f"{url}/__local/buckets/ArchiveBucket", params={"prefix": "orders/"}, timeout=5)
    body = requests.get(f"{url}/__local/buckets/ArchiveBucket/orders/month%3D2026-08/01B.jsonl", timeout=5)

    # then
    assert listing.json() == {
        "bucket": "ArchiveBucket",
        "objects": [{"key": "orders/month=2026-08/01B.jsonl", "size": 17}],
    }
    assert (body.status_code, body.content, body.headers["content-type"]) == (
        200,
        objects["orders/month=2026-08/01B.jsonl"],
        "application/x-ndjson",
    )
    assert requests.get(f"{url}/__local/buckets/NoSuchBucket", timeout=5).status_code == 404
    assert requests.get(f"{url}/__local/buckets/ArchiveBucket/orders/none.jsonl", timeout=5).status_code == 404


def answers(server: str, request: bytes) -> list[bytes]:
    """The status lines of every answer to ``request`` (one or more requests, sent at once), read until the
    server closes the connection."""
    host, port = server.removeprefix("http://").split(":")
    received = b""
    with socket.create_connection((host, int(port)), timeout=ANSWER_TIMEOUT_S) as connection:
        connection.sendall(request)
        while chunk := connection.recv(65536):
            received += chunk
    return re.findall(rb"HTTP/1\.1 \d{3} [^\r]*", received)  # an answer may follow a body on its line


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"POST /echo HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n", b"400"),  # no colon
        (b"POST /echo HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n", b"400"),  # whitespace before the colon
        (b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Note: a\r\n  folded\r\n\r\n", b"400"),  # obs-fold
        (b"POST /echo HTTP/1.1\r\n: no name\r\n\r\n", b"400"),
        (b"POST /echo HTTP/1.1\r\nX-Long: " + b"x" * 70_000 + b"\r\n\r\n", b"431"),
        (b"POST /echo HTTP/1.1\r\n" + b"X-Many: 1\r\n" * 101 + b"\r\n", b"431"),
        (b"POST /echo HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n", b"505"),
        (b"POST /echo HTTX/1.1\r\nHost: 127.0.0.1\r\n\r\n", b"400"),
        (b"POST /echo\r\nHost: 127.0.0.1\r\n\r\n", b"400"),  # HTTP/0.9: API Gateway speaks 1.1 and 2 only
    ],
)
def test_a_malformed_request_head_is_refused_as_json_and_the_connection_closed(
    serving: str, head: bytes, status: bytes
) -> None:
    # when a head the server cannot read is followed by a valid request on the same connection
    valid = b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"
    host, port = serving.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=ANSWER_TIMEOUT_S) as connection:
        connection.sendall(head + valid)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk

    # then one answer came, the refusal, in JSON, and the connection closed without serving the rest
    status_lines = re.findall(rb"HTTP/1\.1 \d{3} [^\r]*", received)
    assert len(status_lines) == 1
    assert status_lines[0].startswith(b"HTTP/1.1 " + status + b" ")
    assert b"content-type: application/json" in received
    assert json.loads(received.split(b"\r\n\r\n", 1)[1])["message"]


def test_header_names_are_read_without_regard_to_case_and_one_connection_serves_many_requests(serving: str) -> None:
    # when two HTTP/1.1 requests come on one connection, the second asking to close it
    first = b"POST /echo HTTP/1.1\r\nhOsT: 127.0.0.1\r\ncontent-LENGTH: 3\r\n\r\n{ }"
    second = b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nCONTENT-LENGTH: 2\r\nConnection: Close\r\n\r\n{}"

    # then both are served, each body read by its length, and the server closes after the second
    assert answers(serving, first + second) == [b"HTTP/1.1 200 OK", b"HTTP/1.1 200 OK"]


def test_an_http_1_0_request_is_answered_and_its_connection_closed_unless_kept_alive(serving: str) -> None:
    request = b"POST /echo HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"
    kept = b"POST /echo HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}"
    assert answers(serving, request + request) == [b"HTTP/1.1 200 OK"]
    assert answers(serving, kept + request) == [b"HTTP/1.1 200 OK", b"HTTP/1.1 200 OK"]


def test_a_client_expecting_100_continue_gets_it_before_sending_the_body(serving: str) -> None:
    host, port = serving.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=ANSWER_TIMEOUT_S) as connection:
        # given a request whose client waits for a 100 before it sends the body
        connection.sendall(
            b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n"
            b"Connection: close\r\n\r\n"
        )
        # when the server says to go on, and the body follows
        assert connection.recv(4096).startswith(b"HTTP/1.1 100 Continue")
        connection.sendall(b"{}")
        # then the request is served
        assert connection.recv(4096).startswith(b"HTTP/1.1 200 OK")


def test_every_answer_carries_the_second_it_was_given_in_as_an_http_date(serving: str) -> None:
    # when a request is answered
    before = int(time.time())
    date = requests.post(f"{serving}/echo", timeout=ANSWER_TIMEOUT_S).headers["date"]
    after = int(time.time())
    # then its Date field is that second's, as HTTP-date (RFC 9110 §5.6.7: GMT), formatted once per second
    assert date in {http_date(second) for second in range(before, after + 1)}
    assert [http_date(1_700_000_000), http_date(1_700_000_001)] == [
        "Tue, 14 Nov 2023 22:13:20 GMT",
        "Tue, 14 Nov 2023 22:13:21 GMT",
    ]
