"""Create the template's tables in whatever DynamoDB the shared client points at (moto or DynamoDB Local)."""

from typing import Any

from local.cfn import table_definitions


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
