"""Search engines for the test tiers: the in-memory fake and every real OpenSearch-API engine available.

osmem-server (an in-memory OpenSearch-compatible engine, a dev dependency) always runs; a real
OpenSearch joins when ``SEARCH_CONTRACT_ENDPOINT`` names one (``http://localhost:9200``).
"""

import os
from collections.abc import Iterator

import pytest

from shopfeed.platform.search import SearchIndex
from shopfeed.platform.search.opensearch import connect
from tests.unit.search_fakes import InMemorySearchIndex

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
