"""Small helpers every repository shares: item (de)serialisation and TransactWriteItems with its
cancellation reasons decoded. Repositories turn the reasons into domain errors."""

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

Item = dict[str, Any]


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, set):
        return {_plain(v) for v in value}
    return value


def serialize(item: Mapping[str, Any]) -> dict[str, Any]:
    """Python values → DynamoDB attribute values; None-valued attributes are left out."""
    return {k: _serializer.serialize(v) for k, v in item.items() if v is not None}


def value(v: Any) -> Any:
    return _serializer.serialize(v)


def deserialize(item: Mapping[str, Any]) -> Item:
    """DynamoDB attribute values → Python values (integral numbers become int)."""
    return {k: _plain(_deserializer.deserialize(v)) for k, v in item.items()}


@dataclass(frozen=True)
class Reason:
    """One entry of CancellationReasons, positionally matching the transaction's items."""

    code: str
    item: Item | None

    @property
    def failed_condition(self) -> bool:
        return self.code == "ConditionalCheckFailed"


class TransactionCancelled(Exception):
    def __init__(self, reasons: Sequence[Reason]) -> None:
        super().__init__(", ".join(r.code for r in reasons))
        self.reasons = list(reasons)


class TransactionContended(Exception):
    """Every attempt collided with a concurrent transaction on the same items."""


def _reasons(error: ClientError) -> list[Reason]:
    raw = error.response.get("CancellationReasons") or []
    return [Reason(code=r.get("Code", "None"), item=deserialize(r["Item"]) if "Item" in r else None) for r in raw]


def transact_write(client: "DynamoDBClient", items: Sequence["TransactWriteItemTypeDef"], attempts: int = 8) -> None:
    """One TransactWriteItems. Conflicts with concurrent transactions are retried with jittered
    backoff (the SDK does not retry cancellations); any other cancellation raises
    TransactionCancelled with decoded reasons."""
    for attempt in range(attempts):
        try:
            client.transact_write_items(TransactItems=list(items))
            return
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            reasons = _reasons(error)
            conflicted = any(r.code == "TransactionConflict" for r in reasons)
            decisive = [r for r in reasons if r.code not in ("None", "TransactionConflict")]
            if decisive or not conflicted:
                raise TransactionCancelled(reasons) from error
            time.sleep(random.uniform(0, 0.01 * 2**attempt))  # full jitter, 10 ms doubling
    raise TransactionContended()


def is_conditional_failure(error: ClientError) -> bool:
    return error.response["Error"]["Code"] == "ConditionalCheckFailedException"


def old_item(error: ClientError) -> Item | None:
    """The item a failed conditional write saw (ReturnValuesOnConditionCheckFailure=ALL_OLD)."""
    raw: Mapping[str, Any] | None = error.response.get("Item")  # type: ignore[assignment]
    return deserialize(raw) if raw else None
