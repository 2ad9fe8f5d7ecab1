"""DynamoDB Local layer: the handler against Amazon's own engine, for what moto cannot show.

moto's in-process backend is not thread-safe (50 concurrent TransactWriteItems on stock 10 gave 12
orders and crashed threads), so races are proven here. One DynamoDB Local per xdist worker, started
by the worker's first test here; each module is an xdist group of its own (``xdist_group(__name__)``),
so both workers can take modules of this tier while its module fixtures are built once. Every test
gets its own tables under a unique suffix, except where a module's tests only read a large data set
written once for them (test_reindex.py).

A module marked ``volume`` (thousands of items a test) gets a DynamoDB Local of its own, stopped when
the module ends: the shared engine stays slow after such a load even once its tables are deleted (the
archive kill test took 28.5 s alone and 101 s right after the 10,000-follower fanout; fresh tables per
test did not help, a fresh engine for the fanout did: 17 s setup + 43 s against 48 s + 169 s).
"""

import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from moto.server import ThreadedMotoServer

from local import dynamodb_local
from local.engines import CALL_TIMEOUT_SCALE
from local.harness.client import ApiClient
from local.harness.tables import create_tables
from shopfeed.commerce import items
from shopfeed.platform import clients, dynamo
from tests.conftest import reset_caches
from tests.support.engines import running_dynamodb_local


@pytest.fixture(scope="session")
def dynamodb_local_engine() -> Iterator[dynamodb_local.DynamoDBLocal]:
    with running_dynamodb_local() as engine:
        yield engine


@pytest.fixture(scope="module")
def volume_engine() -> Iterator[dynamodb_local.DynamoDBLocal]:
    with running_dynamodb_local() as engine:
        yield engine


@pytest.fixture(scope="module")
def engine(request: pytest.FixtureRequest) -> dynamodb_local.DynamoDBLocal:
    """The worker's DynamoDB Local, or the module's own for a module marked ``volume``."""
    shared = "volume_engine" if request.node.get_closest_marker("volume") else "dynamodb_local_engine"
    started: dynamodb_local.DynamoDBLocal = request.getfixturevalue(shared)
    return started


@pytest.fixture(scope="module")
def sqs_endpoint() -> Iterator[str]:
    """SQS in a moto server, for the module's queues (DynamoDB Local has no SQS): set it as
    ``AWS_ENDPOINT_URL_SQS``."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=dynamodb_local.free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def tables(
    engine: dynamodb_local.DynamoDBLocal,
    environment: None,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[dict[str, str]]:
    """Fresh template tables in DynamoDB Local, with the function's environment pointing at them.

    Depends on the autouse ``environment`` fixture so the endpoint is set after it cleared them.
    """
    point_at(engine, monkeypatch)
    names = create_tables(clients.dynamodb(), suffix=f"-{uuid.uuid4().hex[:12]}")
    point_at(engine, monkeypatch, names)
    yield names
    client = clients.dynamodb()
    for name in names.values():
        client.delete_table(TableName=name)


def point_at(
    engine: dynamodb_local.DynamoDBLocal, monkeypatch: pytest.MonkeyPatch, names: Mapping[str, str] | None = None
) -> None:
    """The function's environment on ``engine``, and on the template tables ``names`` when given."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", engine.endpoint)
    monkeypatch.setenv("CALL_TIMEOUT_SCALE", CALL_TIMEOUT_SCALE)
    if names:
        monkeypatch.setenv("COMMERCE_TABLE_NAME", names["CommerceTable"])
        monkeypatch.setenv("FEED_TABLE_NAME", names["FeedTable"])
    reset_caches()


@pytest.fixture
def commerce_api(tables: dict[str, str]) -> ApiClient:
    """The handler in this process, for setting up and checking; races run in containers (race.py)."""
    from functions.commerce_api.app import lambda_handler

    return ApiClient(lambda_handler)


@pytest.fixture
def admin(commerce_api: ApiClient) -> ApiClient:
    return commerce_api.as_user("U-ADMIN", "admin")


@pytest.fixture
def stored(tables: dict[str, str]) -> "StoredItems":
    return StoredItems(tables["CommerceTable"])


class StoredItems:
    """What the table holds, read back strongly consistent: by key, or by ``entity_type`` (a Scan:
    tests only)."""

    def __init__(self, table: str) -> None:
        self.table = table

    def all(self) -> list[dict[str, Any]]:
        pages = clients.dynamodb().get_paginator("scan").paginate(TableName=self.table, ConsistentRead=True)
        return [dynamo.deserialize(item) for page in pages for item in page["Items"]]

    def get(self, key: Mapping[str, str]) -> dict[str, Any]:
        """One item by its key, strongly consistent; fails the test if it is missing."""
        response = clients.dynamodb().get_item(TableName=self.table, Key=dynamo.serialize(key), ConsistentRead=True)
        assert "Item" in response, f"no item {dict(key)} in {self.table}"
        return dynamo.deserialize(response["Item"])

    def units(self, product_id: str) -> int:
        """The stock of a product: the units of all its buckets (a Scan: tests only)."""
        return sum(int(b["available"]) for b in self.of(items.STOCK_BUCKET, product_id=product_id))

    def of(self, entity_type: str, **matching: Any) -> list[dict[str, Any]]:
        return [
            item
            for item in self.all()
            if item.get("entity_type") == entity_type and all(item.get(k) == v for k, v in matching.items())
        ]
