"""A search engine that hangs: the API answers 503 with Retry-After within its budget, stops asking
while the breaker is open, and the routes that need no search are unaffected."""

import socket
import threading
from collections.abc import Iterator

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product
from shopfeed.platform.search import engine
from tests.support.search import accepted


class HungEngine:
    """Accepts connections and never answers, counting them."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self.connections = 0
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        for connection in accepted(self._server):
            self.connections += 1
            self._held.append(connection)

    def close(self) -> None:
        self._server.close()
        for connection in self._held:
            connection.close()


@pytest.fixture
def hung(monkeypatch: pytest.MonkeyPatch) -> Iterator[HungEngine]:
    server = HungEngine()
    monkeypatch.setenv("SEARCH_ENDPOINT", server.url)
    # The API's budget, shortened so the test waits fractions of a second (its shape is what is tested).
    monkeypatch.setattr(engine, "API_BUDGET", engine.Budget(timeout=0.2, retries=1))
    yield server
    server.close()


def test_a_hung_engine_is_a_503_with_retry_after_and_the_breaker_stops_asking_it(
    commerce_api: ApiClient, admin: ApiClient, hung: HungEngine
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT")
    # when: three searches time out within the budget
    answers = [commerce_api.get("/search/products", query={"q": "shirt"}) for _ in range(3)]
    asked = hung.connections
    fast = commerce_api.get("/search/products", query={"q": "shirt"})
    # then: each is a 503 naming a time to come back, no more tries than the budget allows
    for answer in [*answers, fast]:
        assert answer.status == 503, answer.text
        assert answer.json["type"].endswith("/search-unavailable")
        assert 1 <= int(answer.headers["Retry-After"]) <= 30
    assert 3 <= asked <= 3 * 2 * (engine.API_BUDGET.retries + 1)
    # the fourth is refused by the breaker without asking the engine
    assert hung.connections == asked
    # and a route that needs no search is served as usual
    assert commerce_api.get("/products/P-RED-TSHIRT").status == 200
