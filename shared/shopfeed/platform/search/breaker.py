"""A circuit breaker in front of the engine, for the API: while search is down, a request is answered
503 with Retry-After at once instead of waiting out the client's timeouts, so a hung engine holds no
function for long and the routes that need no search go on as before.

After ``failures`` unavailable answers in a row the breaker opens for ``cooldown`` seconds: searches
fail fast with SearchUnavailable (Retry-After: the time left). When it has passed, one search is let
through: a success closes the breaker, a failure opens it again. State is per container, as a Lambda
container serves one request at a time. Written here because neither opensearch-py nor Powertools has
one; the adapter's own timeouts and retries bound each call (``engine.API_BUDGET``).
"""

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shopfeed.platform.search import port


@dataclass
class Breaker:
    """``SearchIndex`` around another one: its searches guarded, everything else passed through."""

    engine: port.SearchIndex
    failures: int = 3
    cooldown: float = 30.0
    clock: Callable[[], float] = time.monotonic
    _failed: int = field(default=0, init=False)
    _open_until: float | None = field(default=None, init=False)

    def search(self, spec: port.SearchMapping, query: port.SearchQuery) -> port.SearchPage:
        now = self.clock()
        if self._open_until is not None and now < self._open_until:
            raise port.SearchUnavailable(
                "the engine failed just now (the breaker is open)", math.ceil(self._open_until - now)
            )
        try:
            page = self.engine.search(spec, query)
        except port.SearchUnavailable:
            self._failed += 1
            if self._failed >= self.failures or self._open_until is not None:
                self._open_until = self.clock() + self.cooldown
            raise
        self._failed, self._open_until = 0, None
        return page

    def ensure_index(self, spec: port.SearchMapping) -> bool:
        return self.engine.ensure_index(spec)

    def write(
        self, spec: port.SearchMapping, writes: Sequence[port.Write]
    ) -> list[port.Outcome | port.SearchWriteFailed]:
        return self.engine.write(spec, writes)

    def get(self, spec: port.SearchMapping, doc_ids: Sequence[str]) -> dict[str, port.StoredDocument]:
        return self.engine.get(spec, doc_ids)

    def refresh(self, spec: port.SearchMapping) -> None:
        self.engine.refresh(spec)

    def warm_up(self, spec: port.SearchMapping) -> None:
        self.engine.warm_up(spec)  # outside the breaker: a failed warm-up opens nothing

    def create_index(self, spec: port.SearchMapping, name: str) -> None:
        self.engine.create_index(spec, name)

    def fill(self, name: str, writes: Sequence[port.Write]) -> list[port.Outcome | port.SearchWriteFailed]:
        return self.engine.fill(name, writes)

    def move_alias(self, spec: port.SearchMapping, to: str) -> list[str]:
        return self.engine.move_alias(spec, to)
