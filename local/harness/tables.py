"""Create the template's tables in whatever DynamoDB the shared client points at (moto or DynamoDB Local)."""

from collections.abc import Collection
from typing import Any

from local.cfn import table_definitions
from shopfeed.platform import clients, dynamo


def create_tables(client: Any, suffix: str = "", only: Collection[str] | None = None) -> dict[str, str]:
    """Create the tables of template.yaml (those named in ``only``, or all); returns logical id -> name.

    A context's tests create its own tables only, so a new context's tables do not add to every
    other context's test setup.
    """
    names = {}
    for logical, definition in table_definitions().items():
        if only is not None and logical not in only:
            continue
        args = {k: v for k, v in definition.items() if not k.startswith("_")}
        args["TableName"] = logical + suffix
        client.create_table(**args)
        client.get_waiter("table_exists").wait(TableName=args["TableName"])
        names[logical] = args["TableName"]
    return names


def table_items(table: str = "CommerceTable") -> list[dict[str, Any]]:
    """Every item of a table (a Scan: tests and benchmarks only, never the service)."""
    pages = clients.dynamodb().get_paginator("scan").paginate(TableName=table)
    return [dynamo.deserialize(item) for page in pages for item in page["Items"]]
