"""Integration layer: handlers and repositories against moto, tables built from template.yaml."""

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from local import cfn
from local.harness.client import ApiClient
from local.harness.factories import create_product
from local.harness.tables import create_tables
from shopfeed.accounts.settings import AccountsSettings
from shopfeed.commerce.settings import CommerceStreamSettings
from shopfeed.platform import clients
from tests.integration.outbox_support import CommerceStream, Subscriber, create_event_bus_with_subscriber
from tests.support.moto_backend import (
    empty_tables,
    forget_all_but_dynamodb,
    journal_transactions,
    plain_attribute_values,
)
from tests.support.payments import PaymentChain, PaymentLine

# The tables commerce's settings name (through template.yaml's environment), and only those. The user
# routes (shopfeed.accounts) keep a user's social profile in FeedTable, so registration needs it too.
COMMERCE_TABLES = frozenset(
    cfn.table_variables()[field.upper()]
    for settings in (CommerceStreamSettings, AccountsSettings)
    for field in settings.model_fields
    if field.endswith("_table_name")
)
journal_transactions()
plain_attribute_values()
Calls = list[tuple[str, str]]


@pytest.fixture
def aws() -> Iterator[None]:
    """The template's commerce tables, empty, in a mock holding nothing else.

    moto is started without a reset and stopped keeping its data, so the tables outlive the test and
    are made once per worker (again only after another tier's own ``mock_aws()`` reset them).
    """
    mock = mock_aws()
    mock.start(reset=False)
    # What another tier left in this worker's moto (a DynamoDB Local test's queues and their messages
    # live in moto too) is forgotten before, not only after: a feed counters test's backfill tasks were
    # read off the next fanout test's queue.
    forget_all_but_dynamodb()
    empty_tables()
    try:
        missing = COMMERCE_TABLES - set(clients.dynamodb().list_tables()["TableNames"])
        if missing:
            create_tables(clients.dynamodb(), only=missing)
        yield
    finally:
        empty_tables()
        forget_all_but_dynamodb()
        mock.stop(remove_data=False)


@pytest.fixture
def aws_calls(aws: None) -> Iterator[Calls]:
    """Every AWS call made by clients created from now on, as (service, operation)."""
    calls: Calls = []

    def record(model: Any, **_: Any) -> None:
        calls.append((model.service_model.service_name, model.name))

    events = boto3._get_default_session().events
    events.register("before-call.*.*", record)
    clients.reset()  # the tier's clients outlive tests (one moto per worker): make them anew, hooked
    yield calls
    events.unregister("before-call.*.*", record)


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
