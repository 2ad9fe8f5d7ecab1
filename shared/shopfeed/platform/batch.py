"""BatchGetItem with every UnprocessedKeys retried, across one or several tables.

The gateway (``dynamo.Table``) serves one table; a batch read may span two (a user's customer and
social profiles are one BatchGetItem). DynamoDB answers what it could not read under
``UnprocessedKeys`` (throttling, the 16 MB response limit) and expects the caller to ask again.
"""

import random
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from shopfeed.platform.dynamo import Item, deserialize, serialize

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_KEYS_PER_CALL: Final = 100
_ATTEMPTS: Final = 8


class UnprocessedKeysLeft(Exception):
    """DynamoDB kept answering UnprocessedKeys through every retry."""


def batch_get(
    client: "DynamoDBClient", keys_by_table: Mapping[str, Sequence[Mapping[str, str]]], consistent: bool = False
) -> dict[str, list[Item]]:
    """The items found under ``keys_by_table`` ({table: [key, ...]}), by table, in no particular order.

    Keys are sent 100 a call (DynamoDB's limit); missing items are simply absent from the answer.
    """
    found: dict[str, list[Item]] = {table: [] for table in keys_by_table}
    flat = [(table, key) for table, table_keys in keys_by_table.items() for key in table_keys]
    for start in range(0, len(flat), MAX_KEYS_PER_CALL):
        request: dict[str, Any] = {}
        for table, key in flat[start : start + MAX_KEYS_PER_CALL]:
            request.setdefault(table, {"Keys": [], "ConsistentRead": consistent})["Keys"].append(serialize(key))
        for attempt in range(_ATTEMPTS):
            response = client.batch_get_item(RequestItems=request)
            for table, raw in response.get("Responses", {}).items():
                found[table] += [deserialize(item) for item in raw]
            request = dict(response.get("UnprocessedKeys") or {})
            if not request:
                break
            time.sleep(random.uniform(0, 0.02 * 2**attempt))  # full jitter, 20 ms doubling
        else:
            raise UnprocessedKeysLeft()
    return found
