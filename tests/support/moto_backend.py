"""One moto backend per xdist worker, shared by the tests that need only DynamoDB.

Creating the template's tables (indexes, stream, TTL) cost ~90 ms a test against ~8 ms for the mock
itself, and most tests answer before they touch a table. So the tables are created once per worker and
emptied after each test, and everything else moto holds (queues, buses, buckets, secrets) is forgotten
as a fresh ``mock_aws()`` would. Stream readers start from TRIM_HORIZON, so each table also gets a new
stream shard: no record of the previous test reaches the next.
"""

from typing import Any

from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.base_backend import BackendDict
from moto.dynamodb.models import dynamodb_backends

REGION = "us-east-1"


def forget_all_but_dynamodb() -> None:
    """What ``mock_aws()`` resets on start, except DynamoDB's tables (moto has no public call for it)."""
    for backend in list(BackendDict._instances):  # type: ignore[misc]
        if backend is dynamodb_backends:
            continue
        for account in backend.values():
            account.reset()
        backend.clear()
        BackendDict._instances.remove(backend)  # type: ignore[misc]


def empty_tables(client: Any) -> None:
    """Delete every item of every table (through the API), then give each table a new stream shard.

    moto refuses to enable a stream twice (real DynamoDB would make a new one), so the shard is replaced
    on its model: the table's stream ARN changes, as a re-enabled stream's would.
    """
    tables = dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].tables
    for name, table in tables.items():
        key_names = [k["AttributeName"] for k in client.describe_table(TableName=name)["Table"]["KeySchema"]]
        projection = ", ".join(f"#k{n}" for n in range(len(key_names)))
        names = {f"#k{n}": key for n, key in enumerate(key_names)}
        pages = client.get_paginator("scan").paginate(
            TableName=name, ProjectionExpression=projection, ExpressionAttributeNames=names
        )
        keys = [item for page in pages for item in page["Items"]]
        for start in range(0, len(keys), 25):
            requests = [{"DeleteRequest": {"Key": key}} for key in keys[start : start + 25]]
            client.batch_write_item(RequestItems={name: requests})
        if table.stream_specification and table.stream_specification.get("StreamEnabled"):
            table.set_stream_specification(table.stream_specification)
