"""Integration layer: handlers and repositories against moto, tables built from template.yaml."""

from collections.abc import Iterator
from typing import Any

import pytest
from moto import mock_aws

from shopfeed.platform import clients
from tests.support.client import ApiClient
from tests.support.tables import create_tables


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        create_tables(clients.dynamodb())
        yield


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


def table_items(table: str = "CommerceTable") -> list[dict[str, Any]]:
    """Every item of a table (a Scan: tests only)."""
    from shopfeed.platform import dynamo

    pages = clients.dynamodb().get_paginator("scan").paginate(TableName=table)
    return [dynamo.deserialize(item) for page in pages for item in page["Items"]]
