"""Fixtures shared by every test layer: a clean environment and fresh shopfeed caches per test."""

import importlib
import importlib.util
import os
import pkgutil
from collections.abc import Iterator
from functools import cache
from types import ModuleType

import pytest
from _pytest.nodeid import NodeId

import shopfeed
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
    "MEDIA_BUCKET_NAME": "shopfeed-media",
    "PULL_AUTHORS_CACHE_SECONDS": "0",
    "EVENT_BUS_NAME": "shopfeed-dev",
    # The URL moto gives a queue named PaymentQueue (tests that enqueue create it).
    "PAYMENT_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/PaymentQueue",
    "CURSOR_SECRET": "test-cursor-secret",
    "POWERTOOLS_SERVICE_NAME": "shopfeed",
    "POWERTOOLS_METRICS_NAMESPACE": "shopfeed",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--dist loadgroup``: each test marked ``xdist_group(name)`` carries ``@name`` in its node id, which
    is how xdist's scheduler keeps a group on one worker.

    pytest-xdist 3.8 (the latest) adds the suffix by assigning ``item._nodeid``, which pytest 9.2 no
    longer reads (a node id is ``str(item._id)``): every group was silently split over both workers, so
    both started each e2e stack and each volume module's DynamoDB Local. This sets the id pytest reads,
    as xdist would, until xdist does it itself (then the suffix is already there and this does nothing).
    """
    if not getattr(config.option, "loadgroup", False):  # set on xdist's workers only
        # Without xdist each group's tests still run together, as a worker runs them: a session stack
        # stops after its group's last test (tests/e2e/conftest.py) and is not started twice.
        first: dict[str, int] = {}
        for index, item in enumerate(items):
            first.setdefault(work_unit(item), index)
        items.sort(key=lambda item: first[work_unit(item)])
        return
    for item in items:
        suffix = work_unit(item)
        if suffix.startswith("@") and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)
    # xdist hands out a unit (a group, or a module of no group) as a whole: it ranks as its most urgent test
    unit_rank: dict[str, int] = {}
    for item in items:
        unit = work_unit(item)
        unit_rank[unit] = min(unit_rank.get(unit, 4), _scheduled_rank(item))
    items.sort(key=lambda item: unit_rank[work_unit(item)])


def work_unit(item: pytest.Item) -> str:
    """What one xdist worker runs together under loadgroup: ``@`` and the item's group names (the suffix
    loadgroup gives its node id), or, for an item of no group, its module."""
    marks = item.iter_markers("xdist_group")
    names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default")) for mark in marks})
    return "@" + "_".join(names) if names else item.nodeid.split("::", 1)[0]


def _scheduled_rank(item: pytest.Item) -> int:
    """The order ``make test`` hands work out in: the long groups first, the short modules last.

    xdist gives each worker the next unit of work (a group, or an ungrouped module) in collection order
    when ``--no-loadscope-reorder`` is set, as ``make test`` sets it: its own reorder, by test count, put
    the few long volume tests last, and one worker ran them alone for the run's last minute and more.
    Sorted (stably) this way, the stacks and sam local's containers start at once, the volume modules
    follow, then the modules that run a tool (``sam build``, checkov: 20 s and more), and the thousands
    of short tests fill every worker to the end.
    """
    if item.get_closest_marker("xdist_group") is None:
        return 3 if item.get_closest_marker("tooling") is not None else 4
    if item.get_closest_marker("volume") is not None:
        return 1
    if item.get_closest_marker("ddblocal") is not None:
        return 2
    return 0  # a stack (e2e, fuzz, faults) or sam local's containers


@cache
def _composition_roots() -> list[ModuleType]:
    """Every context's ``bootstrap`` module: a new context's is found, not listed by hand."""
    contexts = [m.name for m in pkgutil.iter_modules(shopfeed.__path__) if m.ispkg and m.name != "platform"]
    return [
        importlib.import_module(f"shopfeed.{name}.bootstrap")
        for name in contexts
        if importlib.util.find_spec(f"shopfeed.{name}.bootstrap") is not None
    ]


_client_environment: dict[str, str] = {}


def reset_caches() -> None:
    """Forget per-container state (settings, secrets, every context's ports) between tests.

    Clients are kept while the environment they were made from (endpoints, region, credentials) is
    unchanged: making a DynamoDB client loads its service model, which was most of each test's setup.
    They hold no state of their own (moto's mock intercepts every client; its backends reset per test).
    """
    global _client_environment
    settings.cache_clear()
    clients.secret_string.cache_clear()
    made_from = {name: value for name, value in os.environ.items() if name.startswith("AWS_")}
    if made_from != _client_environment:
        clients.reset()
        _client_environment = made_from
    for root in _composition_roots():
        root.reset()


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in [n for n in os.environ if n.startswith("AWS_ENDPOINT_URL")]:
        monkeypatch.delenv(name)
    for name, value in TEST_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    reset_caches()
    yield
    reset_caches()
