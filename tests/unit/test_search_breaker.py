"""The API's circuit breaker in front of the search engine: fail fast while it is down, try again later."""

from typing import Any

import pytest

from shopfeed.platform.search import SearchMapping, SearchPage, SearchQuery, SearchUnavailable
from shopfeed.platform.search.breaker import Breaker

QUERY = SearchQuery("mug", ("name",), 10, {}, None)


class Engine:
    """Answers or fails as told, and counts what it was asked."""

    def __init__(self) -> None:
        self.down = True
        self.asked = 0
        self.warmed = False

    def search(self, spec: SearchMapping, query: SearchQuery) -> SearchPage:
        self.asked += 1
        if self.down:
            raise SearchUnavailable("timed out")
        return SearchPage(hits=[], next_after=None)

    def warm_up(self, spec: SearchMapping) -> None:
        self.warmed = True

    def __getattr__(self, name: str) -> Any:  # the rest of the port is not used here
        raise AttributeError(name)


@pytest.fixture
def now() -> list[float]:
    return [100.0]


def breaker(engine: Engine, now: list[float]) -> Breaker:
    return Breaker(engine, failures=3, cooldown=30, clock=lambda: now[0])  # type: ignore[arg-type]


def ask(guarded: Breaker) -> SearchUnavailable | None:
    try:
        guarded.search(None, QUERY)  # type: ignore[arg-type]
    except SearchUnavailable as refused:
        return refused
    return None


def test_after_three_failures_the_breaker_answers_at_once_with_the_time_left(now: list[float]) -> None:
    # given
    engine = Engine()
    guarded = breaker(engine, now)
    # when: three searches fail at the engine
    assert [ask(guarded) is not None for _ in range(3)] == [True, True, True]
    now[0] += 10
    refused = ask(guarded)
    # then the fourth is refused without asking it, saying when to come back
    assert engine.asked == 3
    assert refused is not None
    assert refused.retry_after == 20


def test_after_the_cooldown_one_search_is_let_through_and_its_outcome_decides(now: list[float]) -> None:
    # given an open breaker
    engine = Engine()
    guarded = breaker(engine, now)
    for _ in range(3):
        ask(guarded)
    # when the cooldown has passed and the engine is still down: one try, open again at once
    now[0] += 30
    assert ask(guarded) is not None
    assert engine.asked == 4
    assert ask(guarded) is not None
    assert engine.asked == 4
    # when it is back after another cooldown: the try succeeds and the breaker closes
    now[0] += 30
    engine.down = False
    assert [ask(guarded) for _ in range(3)] == [None, None, None]
    assert engine.asked == 7


def test_a_success_forgets_earlier_failures(now: list[float]) -> None:
    engine = Engine()
    guarded = breaker(engine, now)
    ask(guarded), ask(guarded)
    engine.down = False
    assert ask(guarded) is None
    engine.down = True
    ask(guarded), ask(guarded)
    assert ask(guarded) is not None
    assert engine.asked == 6  # two failures after the success: still closed, the third is asked


def test_a_warm_up_goes_to_the_engine_and_leaves_the_breaker_closed(now: list[float]) -> None:
    # given an engine that is down
    engine = Engine()
    guarded = breaker(engine, now)
    # when init warms it up four times (more than the failures that open the breaker)
    for _ in range(4):
        guarded.warm_up(None)  # type: ignore[arg-type]
    # then each went to the engine, and the next search is still asked, not refused by the breaker
    assert engine.warmed
    ask(guarded)
    assert engine.asked == 1
