"""TransactWriteItems whose items carry labels, so cancellation reasons come back by label, and the
one retry layer for writes that collide with concurrent transactions."""

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from botocore.exceptions import ClientError

from shopfeed.platform.dynamo.serialization import Item, deserialize
from shopfeed.platform.errors import DependencyUnavailable
from shopfeed.platform.outages import THROTTLED_RETRY_AFTER_S

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

# TransactWriteItems takes at most 100 items (DynamoDB quota).
MAX_TRANSACTION_ITEMS: Final = 100
TRANSACTION_ATTEMPTS: Final = 8


@dataclass(frozen=True)
class Reason:
    """Why one item of a cancelled transaction failed (``None`` if it did not), with the item the
    condition saw when the item asked for it (ReturnValuesOnConditionCheckFailure=ALL_OLD)."""

    code: str
    item: Item | None

    @property
    def failed_condition(self) -> bool:
        return self.code == "ConditionalCheckFailed"


class Transaction:
    """The items of one TransactWriteItems, each under a label that names it (``"post"``,
    ``"counter:U1"``). DynamoDB answers cancellation reasons in item order; labels spare every
    caller from counting positions, which breaks silently when someone adds an item."""

    def __init__(self) -> None:
        self._ops: dict[str, TransactWriteItemTypeDef] = {}

    def add(self, label: str, op: "TransactWriteItemTypeDef") -> "Transaction":
        if label in self._ops:
            raise ValueError(f"transaction label {label!r} is used twice")
        if len(self._ops) == MAX_TRANSACTION_ITEMS:
            raise ValueError(f"a transaction takes at most {MAX_TRANSACTION_ITEMS} items")
        self._ops[label] = op
        return self

    def __len__(self) -> int:
        return len(self._ops)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ops)

    @property
    def ops(self) -> list["TransactWriteItemTypeDef"]:
        return list(self._ops.values())


class TransactionCancelled(Exception):
    """A cancelled TransactWriteItems; ``reasons`` by label, in the transaction's order."""

    def __init__(self, reasons: Mapping[str, Reason]) -> None:
        super().__init__(", ".join(f"{label}: {r.code}" for label, r in reasons.items()))
        self.reasons = dict(reasons)

    def reason(self, label: str) -> Reason:
        return self.reasons.get(label, Reason("None", None))

    def failed(self, label: str) -> bool:
        """Whether the item labelled ``label`` failed its condition."""
        return self.reason(label).failed_condition

    def failed_labels(self, prefix: str = "") -> dict[str, Reason]:
        """The items whose condition failed, by label, those starting with ``prefix`` only."""
        return {k: r for k, r in self.reasons.items() if k.startswith(prefix) and r.failed_condition}


# Cancellation reasons that say nothing of the items' state: the same transaction may pass when sent
# again. The SDK retries neither (a cancellation is not an error it knows to retry).
THROTTLED_REASONS: Final = frozenset({"ProvisionedThroughputExceeded", "ThrottlingError"})
_PASSING: Final = frozenset({"TransactionConflict", *THROTTLED_REASONS})
RETRYABLE_REASONS: Final = _PASSING


class TransactionContended(Exception):
    """Every attempt collided with a concurrent transaction on the same items."""


def _reasons(error: ClientError, labels: Sequence[str]) -> dict[str, Reason]:
    raw = error.response.get("CancellationReasons") or []
    decoded = [Reason(code=r.get("Code", "None"), item=deserialize(r["Item"]) if "Item" in r else None) for r in raw]
    return dict(zip(labels, decoded, strict=False))


def transact_write(
    client: "DynamoDBClient",
    transaction: Transaction | Mapping[str, "TransactWriteItemTypeDef"],
    attempts: int = TRANSACTION_ATTEMPTS,
) -> None:
    """One TransactWriteItems. Conflicts with concurrent transactions and throttled items are retried
    with jittered backoff (the SDK does not retry cancellations); any other cancellation raises
    TransactionCancelled with its reasons by label. This is the only retry layer above the SDK's."""
    labelled = transaction if isinstance(transaction, Transaction) else _labelled(transaction)
    labels = list(labelled)
    throttled = False
    for attempt in range(attempts):
        try:
            client.transact_write_items(TransactItems=labelled.ops)
            return
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            reasons = _reasons(error, labels)
            codes = {r.code for r in reasons.values()} - {"None"}
            if not codes or codes - _PASSING:
                raise TransactionCancelled(reasons) from error
            throttled = bool(codes & THROTTLED_REASONS)
            time.sleep(random.uniform(0, 0.01 * 2**attempt))  # full jitter, 10 ms doubling
    # Throttled to the end: DynamoDB is short of capacity, an outage to the caller (503 at the HTTP
    # edge, a failed record in a consumer); only conflicts to the end are contention (409).
    if throttled:
        raise DependencyUnavailable(THROTTLED_RETRY_AFTER_S)
    raise TransactionContended()


def transact_once(client: "DynamoDBClient", transaction: Transaction) -> None:
    """One TransactWriteItems, not retried: every cancellation, conflicts and throttled items included,
    raises TransactionCancelled with its reasons by label. For a caller that changes the transaction
    before sending it again (an order moving its take to another stock bucket), which a retry of the
    same items (``transact_write``) would only send back to the item that conflicted."""
    try:
        client.transact_write_items(TransactItems=transaction.ops)
    except ClientError as error:
        if error.response["Error"]["Code"] != "TransactionCanceledException":
            raise
        raise TransactionCancelled(_reasons(error, list(transaction))) from error


def retry_conflicts[T](call: Callable[[], T], attempts: int = TRANSACTION_ATTEMPTS) -> T:
    """``call`` (one single-item write), again with jittered backoff while it meets an item a
    transaction holds (TransactionConflictException: the SDK does not retry it). After ``attempts``
    the last conflict is raised: an outage to the caller (503 at the HTTP edge)."""
    for attempt in range(attempts - 1):
        try:
            return call()
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionConflictException":
                raise
        time.sleep(random.uniform(0, 0.01 * 2**attempt))  # full jitter, 10 ms doubling
    return call()


def _labelled(ops: Mapping[str, "TransactWriteItemTypeDef"]) -> Transaction:
    transaction = Transaction()
    for label, op in ops.items():
        transaction.add(label, op)
    return transaction
