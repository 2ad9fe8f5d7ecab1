"""Amazon DynamoDB Local for the test tiers that need a real engine."""

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from local import dynamodb_local

# The JVM answers in ~2 s on an idle machine; a volume module starts one of its own while the other
# worker is busy, and on two cores shared further it once took over 30 s (the default) to answer.
STARTUP_TIMEOUT_S = 120


@contextmanager
def running_dynamodb_local() -> Iterator[dynamodb_local.DynamoDBLocal]:
    """DynamoDB Local on a free port for the block; the test fails (never skips) if it cannot run:
    `make test` installs it, so a missing engine is a broken setup that a skip would hide."""
    reason = dynamodb_local.available()
    if reason:
        pytest.fail(f"DynamoDB Local cannot run: {reason}", pytrace=False)
    engine = dynamodb_local.start(timeout=STARTUP_TIMEOUT_S)
    try:
        yield engine
    finally:
        engine.stop()
