"""Create the template's tables in whatever DynamoDB the shared client points at (moto or DynamoDB Local)."""

from typing import Any

from local.cfn import table_definitions
from shopfeed.platform import clients, dynamo


def create_tables(client: Any, suffix: str = "") -> dict[str, str]:
    """Create every table of template.yaml; returns logical id -> table name."""
    names = {}
    for logical, definition in table_definitions().items():
        args = {k: v for k, v in definition.items() if not k.startswith("_")}
        args["TableName"] = logical + suffix
        client.create_table(**args)
        client.get_waiter("table_exists").wait(TableName=args["TableName"])
        names[logical] = args["TableName"]
    return names


def table_items(table: str = "CommerceTable") -> list[dict[str, Any]]:
    """Every item of a table (a Scan: tests only)."""
    pages = clients.dynamodb().get_paginator("scan").paginate(TableName=table)
    return [dynamo.deserialize(item) for page in pages for item in page["Items"]]
