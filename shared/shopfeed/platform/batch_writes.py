"""BatchWriteItem until every request is written: chunks of 25, UnprocessedItems retried with backoff.

BatchWriteItem is not all-or-nothing: under throttling (or a hot partition) DynamoDB writes part of a
batch and hands the rest back in ``UnprocessedItems``, with HTTP 200. The SDK's retries never see
that, so a caller that ignores it silently loses writes. Puts and deletes by key are idempotent, which
is what makes retrying (and redelivering a whole batch) safe.
"""

import random
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import WriteRequestOutputTypeDef, WriteRequestTypeDef

MAX_BATCH: Final = 25  # DynamoDB's limit per BatchWriteItem
ATTEMPTS: Final = 8
BASE_DELAY_S: Final = 0.05  # doubles per attempt: 50 ms .. 6.4 s, full jitter


class UnprocessedWrites(Exception):
    """DynamoDB still refused some writes after every attempt; the caller's message or record fails
    and is delivered again (the writes it did make are repeated harmlessly)."""

    def __init__(self, table: str, left: int) -> None:
        super().__init__(f"{left} writes to {table} still unprocessed after {ATTEMPTS} attempts")
        self.table = table
        self.left = left


Sleep = Callable[[float], None]


def write_all(
    client: "DynamoDBClient",
    table: str,
    requests: Sequence["WriteRequestTypeDef"],
    *,
    sleep: Sleep = time.sleep,
    attempts: int = ATTEMPTS,
) -> int:
    """Write every request (PutRequest / DeleteRequest) to ``table``; returns how many BatchWriteItem
    calls it took. Raises UnprocessedWrites when a chunk is still partly refused after ``attempts``."""
    calls = 0
    for start in range(0, len(requests), MAX_BATCH):
        pending: Sequence[WriteRequestTypeDef | WriteRequestOutputTypeDef] = requests[start : start + MAX_BATCH]
        for attempt in range(attempts):
            if attempt:
                sleep(random.uniform(0, BASE_DELAY_S * 2 ** (attempt - 1)))
            response = client.batch_write_item(RequestItems={table: list(pending)})
            calls += 1
            pending = response.get("UnprocessedItems", {}).get(table, [])
            if not pending:
                break
        else:
            raise UnprocessedWrites(table, len(pending))
    return calls
