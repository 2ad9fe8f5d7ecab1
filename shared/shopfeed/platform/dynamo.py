"""The table gateway every repository is built on: item (de)serialisation, the few operations a
single-table repository needs, and TransactWriteItems whose cancellation reasons come back by label.

Repositories keep the meaning (key formats from their ``keys.py``, domain errors); this module keeps
the mechanics (expressions, placeholders, retries of contended transactions)::

    table = dynamo.Table(clients.dynamodb(), table_name)
    transaction = dynamo.Transaction()
    transaction.add("post", table.put_op(post_item, if_absent=True))
    transaction.add("counter:U1", table.update_op(key, dynamo.Update(add={"posts": 1}), condition=...))
    try:
        table.transact(transaction, busy="posts of U1")
    except dynamo.TransactionCancelled as cancelled:
        if cancelled.failed("counter:U1"): ...

Conditions are boto3's own ``Attr`` / ``Key`` builders, rendered for the low-level client here.
"""

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from boto3.dynamodb.conditions import Attr, ConditionBase, ConditionExpressionBuilder, Key
from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from shopfeed.platform.errors import Contention

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import QueryOutputTypeDef, TransactWriteItemTypeDef

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

Item = dict[str, Any]
# TransactWriteItems takes at most 100 items (DynamoDB quota).
MAX_TRANSACTION_ITEMS: Final = 100
_BATCH_ATTEMPTS: Final = 5
TRANSACTION_ATTEMPTS: Final = 8
PARTITION: Final = "PK"
SORT: Final = "SK"


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, set):
        return {_plain(v) for v in value}
    if isinstance(value, Binary):
        return value.value  # type: ignore[attr-defined]  # the stubs omit the wrapped bytes
    return value


def serialize(item: Mapping[str, Any]) -> dict[str, Any]:
    """Python values → DynamoDB attribute values; None-valued attributes are left out."""
    return {k: _serializer.serialize(v) for k, v in item.items() if v is not None}


def value(v: Any) -> Any:
    return _serializer.serialize(v)


def deserialize(item: Mapping[str, Any]) -> Item:
    """DynamoDB attribute values → Python values (integral numbers become int)."""
    return {k: _plain(_deserializer.deserialize(v)) for k, v in item.items()}


# -- schema ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexSpec:
    """Where a query reads: a global secondary index (as a context's ``keys.py`` declares it), or the
    base table (``BASE_TABLE``). Its attribute names are spelled once, in the declaration."""

    name: str | None
    partition_key: str
    sort_key: str

    @property
    def position_attributes(self) -> tuple[str, ...]:
        """What DynamoDB needs to resume a query here: the table's key plus the index's key."""
        return tuple(dict.fromkeys((PARTITION, SORT, self.partition_key, self.sort_key)))


BASE_TABLE: Final = IndexSpec(None, PARTITION, SORT)


@dataclass(frozen=True)
class Update:
    """An UpdateExpression by intent: ``set`` values, ``set_if_absent`` (first write wins), ``add`` to
    numbers (negative to subtract), ``remove`` attributes. Attribute names may be dotted paths."""

    set: Mapping[str, Any] = field(default_factory=dict)
    set_if_absent: Mapping[str, Any] = field(default_factory=dict)
    add: Mapping[str, int] = field(default_factory=dict)
    remove: Sequence[str] = ()


@dataclass
class _Expressions:
    """Placeholders of one request; boto3's builder numbers names and values #n0/:v0, ours #u0/:u0."""

    names: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    _builder: ConditionExpressionBuilder = field(default_factory=ConditionExpressionBuilder)

    def condition(self, condition: ConditionBase, is_key_condition: bool = False) -> str:
        built = self._builder.build_expression(condition, is_key_condition=is_key_condition)
        self.names.update(built.attribute_name_placeholders)
        self.values.update({k: value(v) for k, v in built.attribute_value_placeholders.items()})
        return str(built.condition_expression)

    def name(self, path: str) -> str:
        placeholders = []
        for part in path.split("."):
            placeholder = f"#u{len(self.names)}"
            self.names[placeholder] = part
            placeholders.append(placeholder)
        return ".".join(placeholders)

    def _value(self, v: Any) -> str:
        placeholder = f":u{len(self.values)}"
        self.values[placeholder] = value(v)
        return placeholder

    def update(self, change: Update) -> str:
        sets = [f"{self.name(k)} = {self._value(v)}" for k, v in change.set.items()]
        for k, v in change.set_if_absent.items():
            name = self.name(k)
            sets.append(f"{name} = if_not_exists({name}, {self._value(v)})")
        adds = [f"{self.name(k)} {self._value(v)}" for k, v in change.add.items()]
        removes = [self.name(k) for k in change.remove]
        clauses = [("SET", sets), ("ADD", adds), ("REMOVE", removes)]
        return " ".join(f"{verb} {', '.join(parts)}" for verb, parts in clauses if parts)

    def arguments(self) -> dict[str, Any]:
        present: dict[str, Any] = {}
        if self.names:
            present["ExpressionAttributeNames"] = self.names
        if self.values:
            present["ExpressionAttributeValues"] = self.values
        return present


# -- transactions ----------------------------------------------------------------------------------


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
    """One TransactWriteItems. Conflicts with concurrent transactions are retried with jittered
    backoff (the SDK does not retry cancellations); any other cancellation raises
    TransactionCancelled with its reasons by label. This is the only retry layer above the SDK's."""
    labelled = transaction if isinstance(transaction, Transaction) else _labelled(transaction)
    labels = list(labelled)
    for attempt in range(attempts):
        try:
            client.transact_write_items(TransactItems=labelled.ops)
            return
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            reasons = _reasons(error, labels)
            conflicted = any(r.code == "TransactionConflict" for r in reasons.values())
            decisive = [r for r in reasons.values() if r.code not in ("None", "TransactionConflict")]
            if decisive or not conflicted:
                raise TransactionCancelled(reasons) from error
            time.sleep(random.uniform(0, 0.01 * 2**attempt))  # full jitter, 10 ms doubling
    raise TransactionContended()


def _labelled(ops: Mapping[str, "TransactWriteItemTypeDef"]) -> Transaction:
    transaction = Transaction()
    for label, op in ops.items():
        transaction.add(label, op)
    return transaction


# -- the gateway -----------------------------------------------------------------------------------


class ConditionFailed(Exception):
    """A conditional write did not happen; ``current`` is the item it saw, None if there was none."""

    def __init__(self, current: Item | None) -> None:
        super().__init__("the condition of a write failed")
        self.current = current


class TableBusy(Exception):
    """DynamoDB kept answering part of a batch request as unprocessed (throttling)."""

    def __init__(self, table: str) -> None:
        super().__init__(f"table {table} left part of a batch unprocessed after every attempt")


class Table:
    """One DynamoDB table through the low-level client: the operations a repository is built from.

    Keys and items are plain Python mappings; nothing here knows a key format or a domain error
    beyond ``Contention``, which every context answers the same way (409, safe to retry).
    """

    def __init__(self, client: "DynamoDBClient", name: str) -> None:
        self.client = client
        self.name = name

    # -- single-item operations

    def get(self, key: Mapping[str, str], consistent: bool = True) -> Item | None:
        response = self.client.get_item(TableName=self.name, Key=serialize(key), ConsistentRead=consistent)
        return deserialize(response["Item"]) if "Item" in response else None

    def get_many(self, keys: Sequence[Mapping[str, str]], attributes: Sequence[str] = ()) -> list[Item]:
        """The items of up to 100 ``keys`` (BatchGetItem, strongly consistent), in no particular order;
        missing items are left out. ``attributes`` projects (all when empty)."""
        request: dict[str, Any] = {"Keys": [serialize(key) for key in keys], "ConsistentRead": True}
        if attributes:
            names = {f"#p{n}": name for n, name in enumerate(attributes)}
            request |= {"ProjectionExpression": ", ".join(names), "ExpressionAttributeNames": names}
        found: list[Item] = []
        pending: dict[str, Any] = {self.name: request} if keys else {}
        # Keys DynamoDB did not get to (throttling, 16 MB) come back as UnprocessedKeys: ask again.
        for attempt in range(_BATCH_ATTEMPTS):
            if not pending:
                return found
            if attempt:
                time.sleep(random.uniform(0, 0.01 * 2**attempt))
            response = self.client.batch_get_item(RequestItems=pending)
            found += [deserialize(item) for item in response["Responses"].get(self.name, [])]
            pending = dict(response.get("UnprocessedKeys") or {})
        if pending:
            raise TableBusy(self.name)
        return found

    def put_if_absent(self, item: Mapping[str, Any]) -> bool:
        """Write ``item`` unless its key is taken; False (nothing written) if it was."""
        try:
            self.client.put_item(**self.put_op(item, if_absent=True)["Put"])
        except ClientError as error:
            if _is_conditional_failure(error):
                return False
            raise
        return True

    def put_if(self, item: Mapping[str, Any], condition: ConditionBase) -> bool:
        """Write ``item`` if ``condition`` holds on the item it replaces; False (nothing written) if not."""
        expressions = _Expressions()
        rendered = expressions.condition(condition)
        try:
            self.client.put_item(
                TableName=self.name, Item=serialize(item), ConditionExpression=rendered, **expressions.arguments()
            )
        except ClientError as error:
            if _is_conditional_failure(error):
                return False
            raise
        return True

    def update(self, key: Mapping[str, str], change: Update, condition: ConditionBase | None = None) -> Item:
        """UpdateItem; the item as written. Raises ConditionFailed with the item the condition saw."""
        try:
            response = self.client.update_item(
                **self.update_op(key, change, condition, return_old_on_failure=True)["Update"],
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if _is_conditional_failure(error):
                raise ConditionFailed(_old_item(error)) from error
            raise
        return deserialize(response["Attributes"])

    def delete(self, key: Mapping[str, str], condition: ConditionBase | None = None) -> Item | None:
        """DeleteItem; the item deleted, None if there was none (deleting nothing is no error). Raises
        ConditionFailed with the item the condition saw (None when there was none)."""
        try:
            response = self.client.delete_item(**self.delete_op(key, condition)["Delete"], ReturnValues="ALL_OLD")
        except ClientError as error:
            if _is_conditional_failure(error):
                raise ConditionFailed(_old_item(error)) from error
            raise
        return deserialize(response["Attributes"]) if "Attributes" in response else None

    def update_versioned(self, key: Mapping[str, str], expected_version: int, change: Update) -> Item:
        """``change`` plus ``version + 1``, only if the stored ``version`` is ``expected_version``.

        Raises ConditionFailed: ``current`` None when there is no such item, else the stored item
        (its ``version`` is the one a 412 reports).
        """
        bumped = Update(set=change.set, set_if_absent=change.set_if_absent, add={**change.add, "version": 1})
        condition = Attr(PARTITION).exists() & Attr("version").eq(expected_version)
        return self.update(key, bumped, condition)

    # -- transaction items

    def put_op(self, item: Mapping[str, Any], if_absent: bool = False) -> "TransactWriteItemTypeDef":
        put: dict[str, Any] = {"TableName": self.name, "Item": serialize(item)}
        if if_absent:
            put["ConditionExpression"] = f"attribute_not_exists({PARTITION})"
            put["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return {"Put": put}  # type: ignore[typeddict-item]

    def update_op(
        self,
        key: Mapping[str, str],
        change: Update,
        condition: ConditionBase | None = None,
        return_old_on_failure: bool = False,
    ) -> "TransactWriteItemTypeDef":
        expressions = _Expressions()
        update: dict[str, Any] = {
            "TableName": self.name,
            "Key": serialize(key),
            "UpdateExpression": expressions.update(change),
        }
        if condition is not None:
            update["ConditionExpression"] = expressions.condition(condition)
        if return_old_on_failure:
            update["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return {"Update": {**update, **expressions.arguments()}}  # type: ignore[typeddict-item]

    def check_op(self, key: Mapping[str, str], condition: ConditionBase) -> "TransactWriteItemTypeDef":
        """A ConditionCheck: the transaction commits only if ``condition`` holds on the item at ``key``
        (a missing item has no attributes: ``Attr(...).exists()`` and comparisons are false). If it does
        not hold, its reason carries the item as it was (ALL_OLD), or none when there is no such item."""
        expressions = _Expressions()
        check: dict[str, Any] = {
            "TableName": self.name,
            "Key": serialize(key),
            "ConditionExpression": expressions.condition(condition),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        return {"ConditionCheck": {**check, **expressions.arguments()}}  # type: ignore[typeddict-item]

    def delete_op(self, key: Mapping[str, str], condition: ConditionBase | None = None) -> "TransactWriteItemTypeDef":
        """A Delete (transaction item); with ``condition``, a failure returns the item it saw."""
        delete: dict[str, Any] = {"TableName": self.name, "Key": serialize(key)}
        if condition is not None:
            expressions = _Expressions()
            delete["ConditionExpression"] = expressions.condition(condition)
            delete["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
            delete |= expressions.arguments()
        return {"Delete": delete}  # type: ignore[typeddict-item]

    def transact(self, transaction: Transaction, busy: str, attempts: int = TRANSACTION_ATTEMPTS) -> None:
        """Commit ``transaction``. Raises TransactionCancelled (reasons by label) or, when concurrent
        transactions kept winning ``attempts`` times, ``Contention(busy)``: ``busy`` names what was
        contended. A caller that retries itself (re-reading first) passes ``attempts=1``, so there is
        one retry layer, not two nested ones."""
        try:
            transact_write(self.client, transaction, attempts)
        except TransactionContended:
            raise Contention(busy) from None

    # -- queries

    def query(
        self,
        index: IndexSpec,
        partition: str,
        *,
        where: Callable[[Key], ConditionBase] | None = None,
        filter: ConditionBase | None = None,
        forward: bool = True,
        limit: int | None = None,
        start: Mapping[str, Any] | None = None,
        consistent: bool = False,
    ) -> "QueryOutputTypeDef":
        """One Query call on ``index`` for ``partition``; ``where`` narrows the sort key (it gets the
        index's sort key: ``where=lambda sk: sk.begins_with(keys.SOME_PREFIX)``, the prefix from the
        context's keys module). The raw response: pagers need its DynamoDB-typed keys to build cursors."""
        expressions = _Expressions()
        condition: ConditionBase = Key(index.partition_key).eq(partition)
        if where is not None:
            condition = condition & where(Key(index.sort_key))
        arguments: dict[str, Any] = {
            "TableName": self.name,
            "KeyConditionExpression": expressions.condition(condition, is_key_condition=True),
            "ScanIndexForward": forward,
        }
        if filter is not None:
            arguments["FilterExpression"] = expressions.condition(filter)
        if index.name is not None:
            arguments["IndexName"] = index.name
        if limit is not None:
            arguments["Limit"] = limit
        if start:
            arguments["ExclusiveStartKey"] = start
        if consistent:
            arguments["ConsistentRead"] = True
        return self.client.query(**arguments, **expressions.arguments())

    def scan_pages(
        self, filter: ConditionBase, attributes: Sequence[str] = (), page_size: int = 100
    ) -> Iterator[list[Item]]:
        """Every item matching ``filter``, a Scan page (``page_size`` items read) at a time. For admin
        jobs (backfills) only: no hot path reads the whole table."""
        expressions = _Expressions()
        request: dict[str, Any] = {
            "TableName": self.name,
            "Limit": page_size,
            "FilterExpression": expressions.condition(filter),
            "ConsistentRead": True,
        }
        if attributes:
            request["ProjectionExpression"] = ", ".join(expressions.name(attribute) for attribute in attributes)
        request |= expressions.arguments()
        while True:
            response = self.client.scan(**request)
            yield [deserialize(item) for item in response.get("Items", [])]
            if "LastEvaluatedKey" not in response:
                return
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _is_conditional_failure(error: ClientError) -> bool:
    return error.response["Error"]["Code"] == "ConditionalCheckFailedException"


def _old_item(error: ClientError) -> Item | None:
    """The item a failed conditional write saw (ReturnValuesOnConditionCheckFailure=ALL_OLD)."""
    raw: Mapping[str, Any] | None = error.response.get("Item")  # type: ignore[assignment]
    return deserialize(raw) if raw else None


# Kept for repositories that still call the client directly.
is_conditional_failure = _is_conditional_failure
old_item = _old_item
