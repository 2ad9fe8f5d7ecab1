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

ROUNDS = 8
PER_BATCH = 30


def _race(table: dynamo.Table, deliveries: Sequence[Sequence[streams.ItemChange]]) -> list[streams.Failures]:
    """Each delivery in a thread of its own, all released at once."""
    start = Barrier(len(deliveries))

    def deliver(changes: Sequence[streams.ItemChange]) -> streams.Failures:
        start.wait()
        return count(table, changes)

    with ThreadPoolExecutor(len(deliveries)) as pool:
        return list(pool.map(deliver, deliveries))


def test_a_batch_racing_its_redelivery_and_another_shard_counts_every_record_once(tables: dict[str, str]) -> None:
    # given two shards' records on one target, over the same seconds
    table = dynamo.Table(clients.dynamodb(), tables["FeedTable"])
    left = shard("1", ROUNDS * PER_BATCH, "HOT", seconds=ROUNDS * 2)
    right = shard("2", ROUNDS * PER_BATCH, "HOT", seconds=ROUNDS * 2)
    failures: list[streams.Failures] = []
    # when, round after round, a batch of each shard races a second delivery of the first one
    for n in range(ROUNDS):
        batch = slice(n * PER_BATCH, (n + 1) * PER_BATCH)
        failures += _race(table, [left[batch], left[batch], right[batch]])
    # then a delivery that lost the race fails its records (to come again) or counts what is left
    by_number = {change.sequence_number: change for change in [*left, *right]}
    retried = [by_number[sequence_number] for failed in failures for sequence_number in failed]
    assert count(table, retried) == {}
    assert total(table, "HOT") == 2 * ROUNDS * PER_BATCH
