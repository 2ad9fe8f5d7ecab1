"""Time as moto's SQS sees it, moved forward by a test: visibility timeouts, delays and retention are
judged on moto's clock, so a message's backoff of minutes passes in no time. Only SQS's clock moves:
everything else (the stream pollers, record ages, tokens) keeps the wall clock."""

from datetime import datetime

import pytest
from moto.core import utils
from moto.sqs import models


class QueueTime:
    """Visibility and delays (moto's millisecond clock) move only as the test moves them: the wall clock
    runs a thousand times slower there, so a message held back for ``n`` seconds stays held however
    slowly a loaded machine runs the test between two receives, and one made visible at once (a
    visibility timeout of 0) is visible again after any wall time at all. Long polls and retention
    (moto's second clock) keep the wall clock, plus what the test moved: a long poll still ends."""

    def __init__(self) -> None:
        self.passed = 0.0
        self._started = utils.unix_time()

    def advance(self, seconds: float) -> None:
        self.passed += seconds

    def unix_time(self, dt: datetime | None = None) -> float:
        return utils.unix_time(dt) + (self.passed if dt is None else 0.0)

    def unix_time_millis(self, dt: datetime | None = None) -> float:
        if dt is not None:
            return utils.unix_time_millis(dt)
        wall = utils.unix_time() - self._started
        return (self._started + self.passed + wall / 1000.0) * 1000.0


@pytest.fixture
def queue_time(monkeypatch: pytest.MonkeyPatch) -> QueueTime:
    clock = QueueTime()
    # moto's SQS model reads its clock through these two names, imported from moto.core.utils.
    monkeypatch.setattr(models, "unix_time", clock.unix_time)
    monkeypatch.setattr(models, "unix_time_millis", clock.unix_time_millis)
    return clock
