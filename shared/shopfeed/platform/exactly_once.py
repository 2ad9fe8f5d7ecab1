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
   item, one TransactWriteItems holds the write aggregated over the batch's records for it and one
   conditional mark per record (keyed by the record's sequence number, under a key the context's
   ``keys.py`` builds). The effect and its marks commit together or not at all; a record delivered
   again finds its mark, is left out, and the write is rebuilt from the records left. One write per
   distinct target per batch, exact under redelivery. Marks expire (TTL) after ``MARK_RETENTION``,
   longer than the stream keeps a record (24 h).
3. **Outside effects** (publishing to a bus) cannot commit with a DynamoDB write. They are made at
   least once under a stable id subscribers deduplicate on, and ``skip_applied`` keeps a redelivered
   record from repeating an effect whose state already says it happened (the outbox relay leaves out
   events already marked published).
"""

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import batched
from typing import TYPE_CHECKING, Final

from shopfeed.platform import dynamo
from shopfeed.platform.clock import epoch_seconds, iso
from shopfeed.platform.errors import Contention
from shopfeed.platform.streams import Failures, ItemChange, RecordTypeHandler

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

MARK_RETENTION: Final = timedelta(hours=48)
MARK_ENTITY_TYPE: Final = "AppliedRecord"
# One transaction holds the effect plus at most this many marks (TransactWriteItems' 100 items).
_MARKS_PER_WRITE: Final = dynamo.MAX_TRANSACTION_ITEMS - 1
_EFFECT: Final = "effect"
_MARK: Final = "mark:"

MarkKey = Callable[[str, ItemChange], Mapping[str, str]]
"""The key of the mark that ``change`` was applied to ``target`` (built by the context's keys.py)."""

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


def apply_once(table: dynamo.Table, mark_key: MarkKey, effects: Iterable[Effect], now: datetime) -> Failures:
    """Apply each effect exactly once per record (rule 2 of the module docstring); the failed records
    by sequence number. A target that stays contended fails its records, which Lambda delivers again."""
    failures: Failures = {}
    for effect in effects:
        # One mark per record: a record listed twice must not be counted twice (nor name one item twice).
        unique = list({change.sequence_number: change for change in effect.changes}.values())
        for chunk in batched(unique, _MARKS_PER_WRITE, strict=False):
            failures.update(_apply_chunk(table, mark_key, effect, list(chunk), now))
    return failures


def _apply_chunk(
    table: dynamo.Table, mark_key: MarkKey, effect: Effect, changes: list[ItemChange], now: datetime
) -> Failures:
    # Each round leaves out at least one record already applied, so this ends.
    while changes:
        write = effect.write(changes)
        if write is None:
            return {}
        transaction = dynamo.Transaction()
        for change in changes:
            transaction.add(_MARK + change.sequence_number, table.put_op(_mark(mark_key, effect, change, now), True))
        transaction.add(_EFFECT, write)
        try:
            table.transact(transaction, busy=effect.target)
            return {}
        except dynamo.TransactionCancelled as cancelled:
            applied = {label.removeprefix(_MARK) for label in cancelled.failed_labels(_MARK)}
            if not applied:
                refused = EffectRefused(effect.target, cancelled.reason(_EFFECT))
                return dict.fromkeys((change.sequence_number for change in changes), refused)
            changes = [change for change in changes if change.sequence_number not in applied]
        except Contention as busy:
            return dict.fromkeys((change.sequence_number for change in changes), busy)
    return {}


def _mark(mark_key: MarkKey, effect: Effect, change: ItemChange, now: datetime) -> dynamo.Item:
    return {
        **mark_key(effect.target, change),
        "entity_type": MARK_ENTITY_TYPE,
        "applied_at": iso(now),
        "expires_at": epoch_seconds(now + MARK_RETENTION),
    }


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
