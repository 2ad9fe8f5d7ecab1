"""The clock reads compare with ``expires_at`` (``shopfeed.platform.dynamo.expiry``), for tests whose
items were written at fixed past moments: without it, an item written "in March" is already past its TTL
for a read today, and the read leaves it out as it would in AWS."""

from collections.abc import Callable
from datetime import datetime

import pytest


def reads_at(monkeypatch: pytest.MonkeyPatch, clock: Callable[[], datetime]) -> None:
    """Reads judge expiry by ``clock`` (read, not stepped: a SteppingClock's ``now``, say)."""
    monkeypatch.setattr("shopfeed.platform.dynamo.expiry.utc_now", clock)
