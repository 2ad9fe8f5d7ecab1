"""Time as moto's SQS sees it, moved forward by a test: visibility timeouts, delays and retention are
judged on moto's clock, so a message's backoff of minutes passes in no time. Only SQS's clock moves:
everything else (the stream pollers, record ages, tokens) keeps the wall clock."""

from datetime import datetime

import pytest
from moto.core import utils
from moto.sqs import models


class QueueTime:
    def __init__(self) -> None:
        self.passed = 0.0

    def advance(self, seconds: float) -> None:
        self.passed += seconds

    def unix_time(self, dt: datetime | None = None) -> float:
        return utils.unix_time(dt) + (self.passed if dt is None else 0.0)

    def unix_time_millis(self, dt: datetime | None = None) -> float:
        return self.unix_time(dt) * 1000.0


@pytest.fixture
def queue_time(monkeypatch: pytest.MonkeyPatch) -> QueueTime:
    clock = QueueTime()
    # moto's SQS model reads its clock through these two names, imported from moto.core.utils.
    monkeypatch.setattr(models, "unix_time", clock.unix_time)
    monkeypatch.setattr(models, "unix_time_millis", clock.unix_time_millis)
    return clock
