"""Exactly-once counting on DynamoDB Local with real threads: deliveries racing on one target.

Lambda runs one batch per shard at a time, but a shard's retry can start while the invocation that
timed out is still writing, and other shards' batches count on the same items at any moment. Here a
batch and its redelivery race each other and another shard's batch, round after round, on one
target: every record counts once.
"""

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest

from shopfeed.platform import clients, dynamo, streams
from tests.support.counted import count, shard, total

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

ROUNDS = 6


def _race(table: dynamo.Table, deliveries: Sequence[Sequence[streams.ItemChange]]) -> list[streams.Failures]:
    """Each delivery in a thread of its own, all released at once."""
    start = Barrier(len(deliveries))

    def deliver(changes: Sequence[streams.ItemChange]) -> streams.Failures:
        start.wait()
        return count(table, changes)

    with ThreadPoolExecutor(len(deliveries)) as pool:
        return list(pool.map(deliver, deliveries))


@pytest.mark.parametrize(
    "per_batch",
    [
        30,  # over two seconds: each set written unread, its records checked one by one as it commits
        150,  # in one second: each set read first, then written if it did not move
    ],
)
def test_a_batch_racing_its_redelivery_and_another_shard_counts_every_record_once(
    tables: dict[str, str], per_batch: int
) -> None:
    # given two shards' records on one target, over the same seconds
    table = dynamo.Table(clients.dynamodb(), tables["FeedTable"])
    seconds = ROUNDS * (2 if per_batch <= 100 else 1)
    left = shard("1", ROUNDS * per_batch, "HOT", seconds=seconds)
    right = shard("2", ROUNDS * per_batch, "HOT", seconds=seconds)
    failures: list[streams.Failures] = []
    # when, round after round, a batch of each shard races a second delivery of the first one
    for n in range(ROUNDS):
        batch = slice(n * per_batch, (n + 1) * per_batch)
        failures += _race(table, [left[batch], left[batch], right[batch]])
    # then a delivery that lost the race fails its records (to come again) or counts what is left
    by_number = {change.sequence_number: change for change in [*left, *right]}
    retried = [by_number[sequence_number] for failed in failures for sequence_number in failed]
    assert count(table, retried) == {}
    assert total(table, "HOT") == 2 * ROUNDS * per_batch
