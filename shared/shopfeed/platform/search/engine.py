"""The search engine a function is configured with (``SEARCH_ENDPOINT``), for the composition roots.

opensearch-py is imported where the engine is built, not here, so that importing a function (tests,
tools, ``sam local``) never loads it: an API builds it at init in Lambda, where search is configured
(priming, decision 240), a worker on its first batch.
"""

from dataclasses import dataclass
from typing import Final

from shopfeed.platform.config import SearchSettings, settings
from shopfeed.platform.search import SearchIndex
from shopfeed.platform.search.breaker import Breaker


@dataclass(frozen=True)
class Budget:
    """How long one engine call may take: a read timeout per try, and the tries after the first."""

    timeout: float
    retries: int


# An API function has 10 s: a search gets at most 2 s (1 s, one retry), leaving time to answer 503.
API_BUDGET: Final = Budget(timeout=1.0, retries=1)
# The search sync worker (60 s) and the rebuild: an engine under load gets time to answer.
WORKER_BUDGET: Final = Budget(timeout=5.0, retries=2)


def configured(budget: Budget = WORKER_BUDGET) -> SearchIndex | None:
    """The engine of ``SEARCH_ENDPOINT``, or None when the stack has none (search is off)."""
    config = settings(SearchSettings)
    if not config.search_endpoint:
        return None
    from shopfeed.platform.search.opensearch import connect

    return connect(
        config.search_endpoint, config.search_signing_service, timeout=budget.timeout, retries=budget.retries
    )


def for_api() -> SearchIndex | None:
    """The engine as an API function asks it: within ``API_BUDGET``, behind a circuit breaker."""
    engine = configured(API_BUDGET)
    return Breaker(engine) if engine is not None else None
