"""Integration layer: handlers and repositories against moto, tables built from template.yaml."""

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from local import cfn
from shopfeed.accounts.bootstrap import AccountsSettings
from shopfeed.commerce.settings import CommerceStreamSettings
from tests.integration.outbox_support import CommerceStream, Subscriber, create_event_bus_with_subscriber
from tests.support.client import ApiClient
from tests.support.factories import create_product
from tests.support.moto_backend import REGION, empty_tables, forget_all_but_dynamodb
from tests.support.payments import PaymentChain, PaymentLine
from tests.support.tables import create_tables

# The tables commerce's settings name (through template.yaml's environment), and only those. The user
# routes (shopfeed.accounts) keep a user's social profile in FeedTable, so registration needs it too.
COMMERCE_TABLES = frozenset(
    cfn.table_variables()[field.upper()]
    for settings in (CommerceStreamSettings, AccountsSettings)
    for field in settings.model_fields
    if field.endswith("_table_name")
)


@pytest.fixture(scope="session")
def moto_backend() -> Iterator[Any]:
    """One mock per worker; its DynamoDB client empties the tables between tests."""
    with mock_aws():
        yield boto3.client("dynamodb", region_name=REGION)


@pytest.fixture
def aws(moto_backend: Any) -> Iterator[None]:
    """The template's commerce tables (created on a worker's first use), empty, in a mock with nothing else."""
    missing = COMMERCE_TABLES - set(moto_backend.list_tables()["TableNames"])
    if missing:
        create_tables(moto_backend, only=missing)
    yield
    empty_tables()
    forget_all_but_dynamodb()


@pytest.fixture
def commerce_api(aws: None) -> ApiClient:
    from functions.commerce_api.app import lambda_handler

    return ApiClient(lambda_handler)


@pytest.fixture
def admin(commerce_api: ApiClient) -> ApiClient:
    return commerce_api.as_user("U-ADMIN", "admin")


@pytest.fixture
def ops(commerce_api: ApiClient) -> ApiClient:
    return commerce_api.as_user("U-OPS", "ops")


# -- the outbox chain: a bus with the template's subscriber rule, and the table's stream ------------


@pytest.fixture
def subscriber(aws: None, monkeypatch: pytest.MonkeyPatch) -> Subscriber:
    subscriber = create_event_bus_with_subscriber()
    monkeypatch.setenv("EVENT_BUS_NAME", subscriber.bus_name)
    return subscriber


@pytest.fixture
def stream(aws: None) -> CommerceStream:
    return CommerceStream()


@pytest.fixture
def shop(admin: ApiClient) -> None:
    create_product(admin, "P-RED-TSHIRT", available=100)


# -- payments: the template's PaymentQueue and worker, and the chain from the stream to them --------


@pytest.fixture
def payment_line(aws: None, monkeypatch: pytest.MonkeyPatch) -> PaymentLine:
    line = PaymentLine.create()
    monkeypatch.setenv("PAYMENT_QUEUE_URL", line.url)
    return line


@pytest.fixture
def payment_chain(payment_line: PaymentLine, subscriber: Subscriber) -> PaymentChain:
    return PaymentChain(CommerceStream(), payment_line)
