"""The queue clock of the backoff tests (tests/support/queue_time.py, decision 261): a hold lasts as long
as the test says, however much wall time a loaded machine spends between two receives."""

import pytest
from moto.core import utils

from tests.support.queue_time import QueueTime


def test_visibility_moves_with_the_test_and_not_with_the_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # given a clock made at wall time 1,000,000 s
    wall = [1_000_000.0]
    monkeypatch.setattr(utils, "unix_time", lambda dt=None: wall[0])
    clock = QueueTime()
    start = clock.unix_time_millis()

    # when 5 s of wall time pass, then moto's visibility clock has barely moved (but moved: a message
    # made visible at once is visible again)
    wall[0] += 5
    assert 0 < clock.unix_time_millis() - start < 10

    # and when the test moves it 30 s, it is 30 s later there
    clock.advance(30)
    assert 30_000 < clock.unix_time_millis() - start < 30_010

    # while moto's second clock (long polls, retention) keeps the wall clock plus what the test moved
    assert clock.unix_time() == wall[0] + 30
