"""Exactly-once effects from an at-least-once stream: the rule every record handler follows.

Lambda delivers a stream record at least once. A batch whose invocation failed is delivered again;
with a partial batch response Lambda checkpoints before the first failed record and delivers again
from there, so every later record of the batch comes back too, of every type, including the ones
whose handler succeeded. A handler's effect must therefore be the same whether a record arrives
once or several times. Three kinds of effect, three ways:

1. **Setting state** (put the item a record describes, set ``published_at`` if it is not set,
   delete what a REMOVE removed) is idempotent by construction: write values, never increments,
   and guard writes whose order matters with the source's version.
2. **Accumulating** (counters: ``ADD likes 1``) is not. ``apply_once`` makes it so: for each target
   item, one TransactWriteItems holds the write aggregated over the batch's records for it and, for
   each second of creation time those records span, one *applied set*: an item per (target, second)
   whose string set holds the sequence numbers of the records created in that second already applied
   to the target. A record's creation second never changes, so a record delivered again finds its
   sequence number in the one set it can be in and is left out; the write is rebuilt from the records
   left. A set is written under the condition that it holds none of the records (one ``contains``
   clause each), checked as the transaction commits, so a delivery again or a concurrent writer of the
   same records cancels it; the sets are then read and the records sorted again, and a set read is
   written under the condition that it still holds what was read (its size: a set only grows). A set
   given more records than a condition can check (100) is read first. One write per distinct
   target per batch whatever the batch size (up to 99 distinct seconds of one target's records per
   transaction), exact under redelivery, partial-batch retries and interleaved shards, without
   knowing the shard (Lambda's stream event does not name it). Sets expire (TTL) after
   ``APPLIED_RETENTION``, longer than the stream keeps a record (24 h).
3. **Outside effects** (publishing to a bus) cannot commit with a DynamoDB write. They are made at
   least once under a stable id subscribers deduplicate on, and ``skip_applied`` keeps a redelivered
   record from repeating an effect whose state already says it happened (the outbox relay leaves out
   events already marked published).
"""

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import reduce
from itertools import batched
from operator import or_
from typing import TYPE_CHECKING, Final

from boto3.dynamodb.conditions import Attr, ConditionBase

from shopfeed.platform import dynamo
from shopfeed.platform.clock import epoch_seconds, iso
from shopfeed.platform.errors import Contention
from shopfeed.platform.streams import Failures, ItemChange, RecordTypeHandler

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

APPLIED_RETENTION: Final = timedelta(hours=48)
APPLIED_ENTITY_TYPE: Final = "AppliedRecords"
APPLIED: Final = "sequence_numbers"
"""The string set of an applied set: the sequence numbers of the records applied to its target."""
# One transaction holds the effect plus at most this many applied sets (TransactWriteItems' 100 items).
_SETS_PER_WRITE: Final = dynamo.MAX_TRANSACTION_ITEMS - 1
# Writes under the sets' conditions: a round refused because a set holds some of the records (or moved
# since it was read) reads the sets and sorts again; a target still contended after this many rounds
# fails its records (they come again).
_ROUNDS: Final = dynamo.TRANSACTION_ATTEMPTS
# A set written without reading it first checks each of its records with a contains() clause; a
# condition expression holds 4 KB (~24 characters a clause), so a set given more records is read first.
_UNREAD_CHECKS: Final = 100
_EFFECT: Final = "effect"
_SET: Final = "applied:"

AppliedKey = Callable[[str, int], Mapping[str, str]]
"""The key of the applied set of ``target`` for the records created in one second (epoch seconds),
built by the context's keys.py."""

Write = Callable[[Sequence[ItemChange]], "TransactWriteItemTypeDef | None"]
"""The one write applying these records to a target (None: they change nothing there)."""


@dataclass(frozen=True)
class Effect:
    """What a batch does to one target item: the records that concern it and how to write them."""

    target: str
    changes: Sequence[ItemChange]
    write: Write


class EffectRefused(Exception):
    """The effect's own condition failed (its target is gone, a guard said no): its records fail."""

    def __init__(self, target: str, reason: dynamo.Reason) -> None:
        super().__init__(f"the write to {target} was refused: {reason.code}")
        self.target, self.reason = target, reason


def second_of(change: ItemChange) -> int:
    """The second a record was created in (its ``ApproximateCreationDateTime``, which every delivery of
    the record carries alike): the applied set its sequence number goes to."""
    return int(change.approximate_time.timestamp())


Applied = dict[tuple[str, int], frozenset[str] | None]
"""What was read of the applied sets: by (target, second), the sequence numbers (empty: no set yet;
None: not read)."""


def apply_once(table: dynamo.Table, applied_key: AppliedKey, effects: Iterable[Effect], now: datetime) -> Failures:
    """Apply each effect exactly once per record (rule 2 of the module docstring); the failed records
    by sequence number. A target that stays contended fails its records, which Lambda delivers again."""
    chunks: list[tuple[Effect, list[ItemChange]]] = []
    for effect in effects:
        # A record listed twice must not be counted twice.
        unique = {change.sequence_number: change for change in effect.changes}.values()
        by_second: dict[int, list[ItemChange]] = defaultdict(list)
        for change in unique:
            by_second[second_of(change)].append(change)
        # More distinct seconds than a transaction holds sets (a target's records spread over 99 s or
        # more of creation time: a consumer far behind): one more write per 99 seconds.
        for seconds in batched(sorted(by_second), _SETS_PER_WRITE, strict=False):
            chunks.append((effect, [change for second in seconds for change in by_second[second]]))
    # Sets given more records than a condition can check one by one, read at once for the whole batch
    # (one BatchGetItem per 100 sets); the others are written unread, checked record by record.
    records = Counter((effect.target, second_of(c)) for effect, part in chunks for c in part)
    applied: Applied = dict.fromkeys(records)
    applied |= _read(table, applied_key, [place for place, n in records.items() if n > _UNREAD_CHECKS])
    failures: Failures = {}
    for effect, changes in chunks:
        failures.update(_apply_chunk(table, applied_key, effect, changes, applied, now))
    return failures


def _read(table: dynamo.Table, applied_key: AppliedKey, sets: Collection[tuple[str, int]]) -> Applied:
    keyed = {_identity(applied_key(target, second)): (target, second) for target, second in sets}
    found: Applied = dict.fromkeys(keyed.values(), frozenset())
    for part in batched(keyed, dynamo.MAX_TRANSACTION_ITEMS, strict=False):
        keys = [dict(zip(("PK", "SK"), identity, strict=True)) for identity in part]
        for item in table.get_many(keys, attributes=(dynamo.PARTITION, dynamo.SORT, APPLIED)):
            found[keyed[(item[dynamo.PARTITION], item[dynamo.SORT])]] = frozenset(item.get(APPLIED, ()))
    return found


def _identity(key: Mapping[str, str]) -> tuple[str, str]:
    return key[dynamo.PARTITION], key[dynamo.SORT]


def _apply_chunk(
    table: dynamo.Table,
    applied_key: AppliedKey,
    effect: Effect,
    changes: list[ItemChange],
    applied: Applied,
    now: datetime,
) -> Failures:
    left = changes
    for _ in range(_ROUNDS):
        left = [c for c in left if c.sequence_number not in (applied[(effect.target, second_of(c))] or ())]
        write = effect.write(left) if left else None
        if write is None:
            return {}
        by_second: dict[int, list[str]] = defaultdict(list)
        for change in left:
            by_second[second_of(change)].append(change.sequence_number)
        transaction = dynamo.Transaction().add(_EFFECT, write)
        for second, sequence_numbers in by_second.items():
            seen = applied[(effect.target, second)]
            update = dynamo.Update(
                set={dynamo.ENTITY_TYPE: APPLIED_ENTITY_TYPE, "applied_at": iso(now), "expires_at": _expiry(now)},
                add={APPLIED: set(sequence_numbers)},
            )
            key = applied_key(effect.target, second)
            condition = _none_of(sequence_numbers) if seen is None else _unchanged(seen)
            transaction.add(f"{_SET}{second}", table.update_op(key, update, condition=condition))
        try:
            table.transact(transaction, busy=effect.target)
            return {}
        except dynamo.TransactionCancelled as cancelled:
            if not cancelled.failed_labels(_SET):
                refused = EffectRefused(effect.target, cancelled.reason(_EFFECT))
                return dict.fromkeys((change.sequence_number for change in left), refused)
            # A set holds some of the records (a delivery again), or another writer (this record's shard
            # again, or another shard) added to it since it was read: read them, sort again.
            seconds = {(effect.target, second) for second in by_second}
            applied |= _read(table, applied_key, seconds)
        except Contention as busy:
            return dict.fromkeys((change.sequence_number for change in left), busy)
    return dict.fromkeys((change.sequence_number for change in left), Contention(effect.target))


def _none_of(sequence_numbers: Sequence[str]) -> ConditionBase:
    """The set (unread) holds none of these records: checked when the write commits, so a concurrent
    writer of any of them is caught as surely as a delivery again."""
    present = reduce(or_, (Attr(APPLIED).contains(number) for number in sequence_numbers))
    return Attr(APPLIED).not_exists() | ~present


def _unchanged(seen: frozenset[str]) -> ConditionBase:
    """The set holds what was read: it only grows (and expires whole), so its size says it."""
    return Attr(APPLIED).size().eq(len(seen)) if seen else Attr(APPLIED).not_exists()


def _expiry(now: datetime) -> int:
    return epoch_seconds(now + APPLIED_RETENTION)


def skip_applied(
    handler: RecordTypeHandler, applied: Callable[[Sequence[ItemChange]], Collection[str]]
) -> RecordTypeHandler:
    """``handler`` given only the records whose effect ``applied`` does not find already made (rule 3).

    ``applied`` answers the sequence numbers of those records from the state they left (one read for
    the batch); they are acknowledged without running again.
    """

    def handle(changes: Sequence[ItemChange]) -> Mapping[str, Exception]:
        done = set(applied(changes)) if changes else set()
        return handler([change for change in changes if change.sequence_number not in done])

    return handle
