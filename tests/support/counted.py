"""Stream records that count on test targets, and the count they leave: for the exactly-once tests.

A record here is what ``platform.counters`` needs and nothing more: a sequence number (any decimal
string, up to 40 digits as DynamoDB Streams makes them), a creation time, and an image naming the
target it adds ``amount`` to. Targets live under ``TEST-COUNTED#`` keys in whichever table the test
gives; their applied sets under ``TEST-APPLIED#``.
"""

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from shopfeed.platform import counters, dynamo, streams

NOW = datetime(2026, 11, 27, 4, 0, tzinfo=UTC)
COUNT = "count"


def counted_on(target: str) -> dict[str, str]:
    return {"PK": f"TEST-COUNTED#{target}", "SK": "COUNT"}


def applied_key(target: str, second: int) -> dict[str, str]:
    return {"PK": f"TEST-APPLIED#{target}", "SK": f"{second:012d}"}


def rule(change: streams.ItemChange) -> list[counters.Increment]:
    image = change.image or {}
    return [counters.Increment(counted_on(str(image["target"])), COUNT, int(image["amount"]))]


def record(sequence_number: str, target: str, second: int = 0, amount: int = 1) -> streams.ItemChange:
    """A record created ``second`` seconds after NOW that adds ``amount`` to ``target``."""
    image = {"PK": f"SOURCE#{sequence_number}", "SK": "S", "target": target, "amount": amount}
    created = NOW + timedelta(seconds=second)
    return streams.ItemChange(sequence_number, streams.ChangeKind.INSERT, {}, image, None, created)


def shard(prefix: str, count: int, target: str, seconds: int = 1) -> list[streams.ItemChange]:
    """``count`` records of one shard in order, 40-digit sequence numbers, spread over ``seconds``."""
    return [record(f"{prefix}{n:0{40 - len(prefix)}d}", target, n * seconds // count) for n in range(count)]


def count(table: dynamo.Table, changes: Sequence[streams.ItemChange], now: datetime = NOW) -> streams.Failures:
    """Count ``changes`` as the consumer does at ``now`` (when the delivery runs, not when they were made)."""
    return counters.count(table, applied_key, changes, rule, now, must_exist=False)


def total(table: dynamo.Table, target: str) -> int:
    return int((table.get(counted_on(target)) or {}).get(COUNT, 0))
