"""Fixtures shared by every test layer: a clean environment and fresh shopfeed caches per test."""

import os
from collections.abc import Iterator

import pytest

from shopfeed.platform import clients
from shopfeed.platform.config import settings

TEST_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "COMMERCE_TABLE_NAME": "CommerceTable",
    "FEED_TABLE_NAME": "FeedTable",
    "PULL_AUTHORS_CACHE_SECONDS": "0",
    "EVENT_BUS_NAME": "shopfeed-dev",
    "CURSOR_SECRET": "test-cursor-secret",
    "POWERTOOLS_SERVICE_NAME": "shopfeed",
    "POWERTOOLS_METRICS_NAMESPACE": "shopfeed",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
}


def reset_caches() -> None:
    """Forget per-container state (settings, clients, repositories) between tests."""
    from shopfeed.commerce.routes.deps import commerce_store
    from shopfeed.feed.bootstrap import feed_store

    settings.cache_clear()
    clients.reset()
    commerce_store.cache_clear()
    feed_store.cache_clear()


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in [n for n in os.environ if n.startswith("AWS_ENDPOINT_URL")]:
        monkeypatch.delenv(name)
    for name, value in TEST_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    reset_caches()
    yield
    reset_caches()
