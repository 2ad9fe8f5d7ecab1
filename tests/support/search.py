"""Search engines for the test tiers: the in-memory fake and every real OpenSearch-API engine available;
the search sync queue and its worker as the template declares them; a link to an engine a test can cut.

osmem-server (an in-memory OpenSearch-compatible engine, a dev dependency) always runs; a real
OpenSearch joins when ``SEARCH_CONTRACT_ENDPOINT`` names one (``http://localhost:9200``).
"""

import contextlib
import os
import socket
import threading
from collections.abc import Iterator, Sequence

import pytest

from local.harness.queues import WorkerQueue
from shopfeed.platform.search import SearchIndex
from shopfeed.platform.search.opensearch import connect
from shopfeed.platform.search.projection import Projection
from shopfeed.platform.search.sync import ApplyReport, apply, queue_writes
from shopfeed.platform.streams import ItemChange
from tests.unit.search_fakes import InMemorySearchIndex, InMemoryWrites

ENGINES = ["in-memory", "osmem", *(["opensearch"] if os.environ.get("SEARCH_CONTRACT_ENDPOINT") else [])]


@pytest.fixture(scope="session")
def osmem_engine() -> Iterator[object]:
    """One osmem-server per test process; each test works on its own copy-on-write clone."""
    from osmem_server import OsmemServer

    server = OsmemServer.start(japanese=False, addr="127.0.0.1:0")
    yield server
    server.close()


@pytest.fixture
def osmem_url(osmem_engine: object) -> Iterator[str]:
    clone = osmem_engine.clone()  # type: ignore[attr-defined]
    yield str(clone.url)
    clone.close()


@pytest.fixture(params=ENGINES)
def search_index(request: pytest.FixtureRequest) -> Iterator[SearchIndex]:
    if request.param == "in-memory":
        yield InMemorySearchIndex()
    elif request.param == "osmem":
        # A generous timeout: two cores shared by parallel test workers can stall one bulk request.
        yield connect(request.getfixturevalue("osmem_url"), timeout=60)
    else:
        yield connect(os.environ["SEARCH_CONTRACT_ENDPOINT"], os.environ.get("SEARCH_CONTRACT_SIGNING", "es"))


def delivered(changes: Sequence[ItemChange], projection: Projection, index: SearchIndex) -> ApplyReport:
    """What a stream consumer queues for ``changes``, applied by the worker as one batch, in their
    order (no SQS between): the worker's report. A change that queues nothing (a MODIFY that keeps
    the version) is in no count."""
    queue = InMemoryWrites()
    assert queue_writes(changes, projection, queue) == {}
    bodies = {str(n): write.model_dump_json() for n, write in enumerate(queue.tasks)}
    return apply(bodies, {projection.spec.alias: projection.spec}, index)


class SearchSyncLine(WorkerQueue):
    """SearchSyncQueue, SearchSyncDLQ and the search sync worker reading the queue (template.yaml)."""

    @classmethod
    def create(cls) -> "SearchSyncLine":
        return cls.of("SearchSyncQueue", "SearchSyncDLQ", "SearchSyncWorkerFunction")


@pytest.fixture
def search_sync(aws: None, monkeypatch: pytest.MonkeyPatch) -> SearchSyncLine:
    """The search sync queue the stream consumers are given, and its worker (``drain``)."""
    line = SearchSyncLine.create()
    monkeypatch.setenv("SEARCH_SYNC_QUEUE_URL", line.url)
    return line


class EngineLink:
    """The network between the functions and an engine, as a proxy that can be cut: while it is cut,
    every connection (open ones included) is closed at once, as an engine that went away; restored,
    bytes flow both ways again. The functions see exactly what they would (the adapter's retries,
    SearchUnavailable), whatever code calls the engine."""

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("http://").rsplit(":", 1)
        self._target = (host, int(port))
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._cut = False
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            for connection in self._open:
                _close(connection)
            self._open.clear()

    def restore(self) -> None:
        with self._lock:
            self._cut = False

    def close(self) -> None:
        self.cut()
        _close(self._server)

    def _accept(self) -> None:
        for client in accepted(self._server):
            with self._lock:
                if self._cut:
                    _close(client)
                    continue
                engine = socket.create_connection(self._target)
                self._open += [client, engine]
            for source, sink in ((client, engine), (engine, client)):
                threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()


def accepted(server: socket.socket) -> Iterator[socket.socket]:
    """Each connection ``server`` accepts, until it is closed (a fake engine's accept loop)."""
    while True:
        try:
            connection, _ = server.accept()
        except OSError:
            return
        yield connection


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):  # the link was cut
        while data := source.recv(65536):
            sink.sendall(data)
    _close(sink)


def _close(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)
    connection.close()


@pytest.fixture
def engine_link(osmem_url: str) -> Iterator[EngineLink]:
    """osmem behind a link a test can cut (``cut``, ``restore``)."""
    link = EngineLink(osmem_url)
    yield link
    link.close()
