"""Counters kept by stream consumers: exact under redelivery, one write per counted item per batch.

A context says what each record counts with a ``CountRule``: a follow adds 1 to the followee's
``followers_count`` and 1 to the follower's ``following_count``, its REMOVE takes them back; a like
adds 1 to the post's ``likes_count``. ``count`` turns a batch of records into one effect per target
item (``ADD`` of every attribute's sum over the batch) and applies them with
``exactly_once.apply_once``: each target's write commits together with the sequence numbers of the
records it counts, added to the target's applied sets (one per second of creation time), so a record
Lambda delivers again (the whole batch after an error, everything after the first failed record after
a partial batch response, one half of a bisected batch) is left out and never counted twice. Each
target is exact on its own: a record whose write to one target is refused (the item is gone) fails
and comes again, and its other targets, already counted, skip it then.

Aggregation is the point for hot items: a viral post's like counter takes one write per batch, not
one per like, and so do its applied sets (one per second the batch's likes were made in, in a
partition of their own, ~25 bytes a record): a batch of 100 likes writes two items, not 101.

Every target gets its write even when its sum is zero (a follow and its unfollow in one batch): the
write carries the records' sequence numbers, and without them a redelivery of only the second record
would count it alone.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Final

from boto3.dynamodb.conditions import Attr

from shopfeed.platform import dynamo, exactly_once
from shopfeed.platform.streams import ChangeKind, Failures, ItemChange

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

Key = Mapping[str, str]


@dataclass(frozen=True)
class Increment:
    """What one record adds to one counter attribute of one item (negative to subtract)."""

    target: Key
    attribute: str
    amount: int


_SIGNS: Final = {ChangeKind.INSERT: 1, ChangeKind.REMOVE: -1}


def sign_of(change: ItemChange) -> int | None:
    """+1 for an item written, -1 for one removed (its count taken back); None for a MODIFY, which
    changes no count of the item's existence."""
    return _SIGNS.get(change.kind)


CountRule = Callable[[ItemChange], Sequence[Increment]]
"""What a record counts. Raises KeyError or ValueError for an image it cannot read: that record fails alone."""


def target_id(key: Key) -> str:
    """A target item's identity in applied sets and logs: its key values in key order (``USER#U1|PROFILE``)."""
    return "|".join(str(value) for value in key.values())


def count(
    table: dynamo.Table,
    applied_key: exactly_once.AppliedKey,
    changes: Iterable[ItemChange],
    rule: CountRule,
    now: datetime,
    *,
    must_exist: bool = True,
) -> Failures:
    """Apply what ``rule`` says ``changes`` count, once per record, one write per target; the failed
    records by sequence number (an unreadable image, a missing target, a target that stayed contended).

    ``must_exist=False`` creates a missing target holding only its key and counters (a leaderboard
    entry is nothing else)."""
    failures: Failures = {}
    targets: dict[str, Key] = {}
    by_target: dict[str, list[ItemChange]] = defaultdict(list)
    for change in changes:
        try:
            increments = rule(change)
        except (KeyError, ValueError) as error:  # ValueError includes pydantic's ValidationError
            failures[change.sequence_number] = error
            continue
        for increment in increments:
            target = target_id(increment.target)
            targets[target] = increment.target
            if change not in by_target[target]:
                by_target[target].append(change)
    effects = [
        exactly_once.Effect(target, records, partial(_add, table, targets[target], rule, must_exist))
        for target, records in by_target.items()
    ]
    failures.update(exactly_once.apply_once(table, applied_key, effects, now))
    return failures


def _add(
    table: dynamo.Table, target: Key, rule: CountRule, must_exist: bool, changes: Sequence[ItemChange]
) -> "TransactWriteItemTypeDef":
    totals: dict[str, int] = defaultdict(int)
    for change in changes:
        for increment in rule(change):
            if increment.target == target:
                totals[increment.attribute] += increment.amount
    # ADD would create a missing item holding nothing but counters: the target must exist.
    condition = Attr(dynamo.PARTITION).exists() if must_exist else None
    return table.update_op(target, dynamo.Update(add=dict(totals)), condition=condition)
