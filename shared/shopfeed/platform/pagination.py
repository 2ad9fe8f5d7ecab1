"""Query one page: Limit + 1 so the last page carries no cursor, and the cursor signed and bound."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from shopfeed.platform import dynamo
from shopfeed.platform.cursors import CursorCodec

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def query_page(
    client: "DynamoDBClient",
    codec: CursorCodec,
    scope: str,
    key_attributes: Sequence[str],
    limit: int,
    cursor: str | None,
    **query: Any,
) -> tuple[list[dynamo.Item], str | None]:
    """One page of ``Query(**query)``: up to ``limit`` items and the cursor of the next page.

    ``key_attributes`` are the attributes of the position DynamoDB needs to resume (the table's key
    plus the index's key, when querying an index).
    """
    start = codec.decode(scope, cursor)
    if start is not None:
        query["ExclusiveStartKey"] = start
    response = client.query(Limit=limit + 1, **query)
    raw = response["Items"]
    # More exists if the extra item came back, or DynamoDB stopped early at its 1 MB page limit.
    more = len(raw) > limit or "LastEvaluatedKey" in response
    raw = raw[:limit]
    next_cursor = None
    if more and raw:
        next_cursor = codec.encode(scope, {name: raw[-1][name] for name in key_attributes})
    return [dynamo.deserialize(item) for item in raw], next_cursor
