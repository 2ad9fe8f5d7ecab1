"""Exactly-once counting (``platform.exactly_once`` through ``platform.counters``) against moto: each
way Lambda delivers a stream record again, records of two shards interleaved on one target, a writer
between the read of the applied sets and the write, and batches larger than a transaction."""

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import pytest

from shopfeed.platform import clients, counters, dynamo, exactly_once
from tests.support.calls import dynamodb_calls
from tests.support.counted import NOW, applied_key, count, counted_on, record, rule, shard, total

pytestmark = pytest.mark.usefixtures("aws")


@pytest.fixture
def table() -> dynamo.Table:
    return dynamo.Table(clients.dynamodb(), "CommerceTable")


def test_a_batch_delivered_again_whole_from_a_failed_record_or_in_halves_counts_each_record_once(
    table: dynamo.Table,
) -> None:
    # given a batch of 40 records on two targets, counted once
    batch = shard("7", 40, "A", seconds=3)[::2] + shard("7", 40, "B", seconds=3)[1::2]
    batch.sort(key=lambda change: change.sequence_number)
    assert count(table, batch) == {}
    # when Lambda delivers it again whole, from its 26th record on, then bisected, an hour later
    later = NOW + timedelta(hours=1)
    deliveries = [batch, batch[25:], batch[:20], batch[20:]]
    failures = [count(table, delivery, later) for delivery in deliveries]
    # then
    assert failures == [{}] * 4
    assert (total(table, "A"), total(table, "B")) == (20, 20)


def test_a_partial_batch_retry_counts_the_failed_record_once_and_the_ones_after_it_not_again(
    table: dynamo.Table,
) -> None:
    # given a batch whose third record counts on a target that does not exist yet (its write is refused)
    batch = [record("101", "A"), record("102", "A"), record("103", "B"), record("104", "A"), record("105", "A")]
    table.update(counted_on("A"), dynamo.Update(add={"count": 0}))
    refused = _counting_existing(table, batch)
    assert list(refused) == ["103"]
    assert isinstance(refused["103"], exactly_once.EffectRefused)
    # when the target appears and Lambda delivers the batch again from the failed record on
    table.update(counted_on("B"), dynamo.Update(add={"count": 0}))
    again = _counting_existing(table, batch[2:])
    # then the failed record counts once, the ones after it (already counted on A) not again
    assert again == {}
    assert (total(table, "A"), total(table, "B")) == (4, 1)


def _counting_existing(table: dynamo.Table, batch: Sequence[Any]) -> Mapping[str, Exception]:
    return counters.count(table, applied_key, batch, rule, NOW)


def test_records_of_two_shards_interleaved_on_one_target_each_count_once(table: dynamo.Table) -> None:
    # given two shards whose records count on one target over the same seconds; sequence numbers of
    # 40 digits, one shard's all above the other's, so no order across shards can be read from them
    left, right = shard("1", 60, "T", seconds=3), shard("9", 60, "T", seconds=3)
    # when their batches interleave, each shard's redelivered in part while the other moves on
    deliveries = [left[:20], right[:20], left[10:40], right[:40], left[40:], right[20:], left, right[50:]]
    failures = [count(table, delivery) for delivery in deliveries]
    # then
    assert failures == [{}] * len(deliveries)
    assert total(table, "T") == 120


@pytest.mark.parametrize(
    ("records", "seconds", "first_calls"),
    [
        # more records than a transaction holds items, 50 a second: checked record by record, unread
        (250, 5, {"TransactWriteItems": 1}),
        # 250 in one second: more than one condition checks, so the set is read first
        (250, 1, {"BatchGetItem": 1, "TransactWriteItems": 1}),
        # one a second (a consumer far behind): 99 seconds' sets a transaction
        (150, 150, {"TransactWriteItems": 2}),
    ],
)
def test_a_batch_writes_its_target_once_per_99_seconds_of_records_and_its_redelivery_counts_nothing(
    table: dynamo.Table, records: int, seconds: int, first_calls: dict[str, int]
) -> None:
    # given records on one target, created over some seconds
    batch = shard("3", records, "T", seconds)
    # when the batch is counted, then delivered again
    with dynamodb_calls() as first:
        assert count(table, batch) == {}
    with dynamodb_calls() as again:
        assert count(table, batch) == {}
    # then the redelivery reads the sets, finds every record and writes nothing more
    assert first.counts() == first_calls
    assert again.counts()["BatchGetItem"] >= 1
    assert total(table, "T") == records


class _Overtaken(dynamo.Table):
    """A table whose first read of applied sets is overtaken: another delivery counts ``rival``
    right after it, before the write."""

    def __init__(self, table: dynamo.Table, rival: Sequence[Any]) -> None:
        super().__init__(table.client, table.name)
        self._rival: Sequence[Any] | None = rival

    def get_many(
        self, keys: Sequence[Mapping[str, str]], attributes: Sequence[str] = (), consistent: bool = True
    ) -> list[dynamo.Item]:
        found = super().get_many(keys, attributes, consistent)
        if self._rival is not None:
            rival, self._rival = self._rival, None
            assert count(dynamo.Table(self.client, self.name), rival) == {}
        return found


def test_a_delivery_overtaken_between_its_read_and_its_write_reads_again_and_counts_only_the_rest(
    table: dynamo.Table,
) -> None:
    # given a batch of 150 records of one second (its set read first), and a concurrent delivery of
    # 15 of them that commits after this one's read
    batch = shard("4", 150, "RACED", seconds=1)
    overtaken = _Overtaken(table, batch[:15])
    # when
    with dynamodb_calls() as calls:
        failures = count(overtaken, batch)
    # then its first write is refused (the set moved), the second counts the 135 records left
    assert failures == {}
    assert calls.counts()["TransactWriteItems"] == 3  # the rival's, the refused one, the one that counts
    assert total(table, "RACED") == 150
