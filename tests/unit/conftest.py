"""Unit layer: no network. Services and the HTTP edge run against the in-memory Commerce fake."""

from collections.abc import Iterator

import pytest

from shopfeed.platform.identity import ADMIN, OPS, Caller
from tests.unit.edge import Edge, every_api
from tests.unit.fakes import InMemoryCommerce


@pytest.fixture
def store() -> InMemoryCommerce:
    return InMemoryCommerce()


@pytest.fixture
def ada() -> Caller:
    return Caller(user_id="U100", groups=frozenset())


@pytest.fixture
def bob() -> Caller:
    return Caller(user_id="U200", groups=frozenset())


@pytest.fixture
def admin() -> Caller:
    return Caller(user_id="U-ADMIN", groups=frozenset({ADMIN}))


@pytest.fixture
def ops() -> Caller:
    return Caller(user_id="U-OPS", groups=frozenset({OPS}))


@pytest.fixture
def edge() -> Iterator[Edge]:
    """Every API function on ports that log any call: for what the HTTP edge answers before storage."""
    with every_api() as apis:
        yield apis
