"""The table gateway: one DynamoDB table through the low-level client, the operations a single-table
repository is built from, and the index declarations its queries read."""

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from boto3.dynamodb.conditions import Attr, ConditionBase, Key
from botocore.exceptions import ClientError

from shopfeed.platform.dynamo.expressions import Expressions, Update
from shopfeed.platform.dynamo.indexes import PARTITION, IndexSpec
from shopfeed.platform.dynamo.serialization import Item, deserialize, serialize
from shopfeed.platform.dynamo.transactions import (
    TRANSACTION_ATTEMPTS,
    Transaction,
    TransactionContended,
    retry_conflicts,
    transact_once,
    transact_write,
)
from shopfeed.platform.errors import Contention, DependencyUnavailable

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import QueryOutputTypeDef, TransactWriteItemTypeDef

_BATCH_ATTEMPTS: Final = 5


# -- schema ----------------------------------------------------------------------------------------


class ConditionFailed(Exception):
    """A conditional write did not happen; ``current`` is the item it saw, None if there was none."""

    def __init__(self, current: Item | None) -> None:
        super().__init__("the condition of a write failed")
        self.current = current


class TableBusy(DependencyUnavailable):
    """DynamoDB kept answering part of a batch request as unprocessed (throttling): 503 at the edge."""

    def __init__(self, table: str) -> None:
        super().__init__(retry_after=2)
        self.table = table

    def __str__(self) -> str:
        return f"table {self.table} left part of a batch unprocessed after every attempt"


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

    def get_many(
        self, keys: Sequence[Mapping[str, str]], attributes: Sequence[str] = (), consistent: bool = True
    ) -> list[Item]:
        """The items of up to 100 ``keys`` (BatchGetItem), in no particular order; missing items are
        left out. ``attributes`` projects (all when empty): fewer bytes on the wire, the same capacity
        (DynamoDB charges a read by the item's size). ``consistent=False`` reads eventually: half the
        capacity, and a write of the last second may not be seen yet."""
        request: dict[str, Any] = {"Keys": [serialize(key) for key in keys], "ConsistentRead": consistent}
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
            retry_conflicts(lambda: self.client.put_item(**self.put_op(item, if_absent=True)["Put"]))
        except ClientError as error:
            if _is_conditional_failure(error):
                return False
            raise
        return True

    def create(self, item: Mapping[str, Any]) -> bool:
        """Write ``item`` unless its key holds another item: True if the key now holds ``item``.

        Unlike ``put_if_absent``, an equal item found there counts as written: it is this very write,
        made by an attempt whose answer was lost (the SDK retries after a read timeout, and the retry
        finds what the first attempt wrote). For creates whose caller must not answer "already
        exists" to its own write."""
        try:
            retry_conflicts(lambda: self.client.put_item(**self.put_op(item, if_absent=True)["Put"]))
        except ClientError as error:
            if _is_conditional_failure(error):
                return _old_item(error) == deserialize(serialize(item))
            raise
        return True

    def put_if(self, item: Mapping[str, Any], condition: ConditionBase) -> bool:
        """Write ``item`` if ``condition`` holds on the item it replaces; False (nothing written) if not."""
        expressions = Expressions()
        rendered = expressions.condition(condition)
        try:
            retry_conflicts(
                lambda: self.client.put_item(
                    TableName=self.name, Item=serialize(item), ConditionExpression=rendered, **expressions.arguments()
                )
            )
        except ClientError as error:
            if _is_conditional_failure(error):
                return False
            raise
        return True

    def update(self, key: Mapping[str, str], change: Update, condition: ConditionBase | None = None) -> Item:
        """UpdateItem; the item as written. Raises ConditionFailed with the item the condition saw."""
        try:
            response = retry_conflicts(
                lambda: self.client.update_item(
                    **self.update_op(key, change, condition, return_old_on_failure=True)["Update"],
                    ReturnValues="ALL_NEW",
                )
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
            response = retry_conflicts(
                lambda: self.client.delete_item(**self.delete_op(key, condition)["Delete"], ReturnValues="ALL_OLD")
            )
        except ClientError as error:
            if _is_conditional_failure(error):
                raise ConditionFailed(_old_item(error)) from error
            raise
        return deserialize(response["Attributes"]) if "Attributes" in response else None

    def update_versioned(self, key: Mapping[str, str], expected_version: int, change: Update) -> Item:
        """``change`` plus ``version + 1``, only if the stored ``version`` is ``expected_version``.

        Raises ConditionFailed: ``current`` None when there is no such item, else the stored item
        (its ``version`` is the one a 412 reports). A stored item one version on that holds every
        value ``change`` sets is this very change, made by an attempt whose answer was lost (the SDK
        retried after a read timeout): it is answered as written, not as a conflict.
        """
        try:
            return self.update(key, _bumped(change), _at_version(expected_version))
        except ConditionFailed as failed:
            if failed.current is not None and _made_by(change, expected_version, failed.current):
                return failed.current
            raise

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
        expressions = Expressions()
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

    def versioned_update_op(
        self, key: Mapping[str, str], expected_version: int, change: Update
    ) -> "TransactWriteItemTypeDef":
        """``update_versioned`` as a transaction item: if it fails, its reason carries the stored item
        (None when there is no such item)."""
        return self.update_op(key, _bumped(change), _at_version(expected_version), return_old_on_failure=True)

    def check_op(self, key: Mapping[str, str], condition: ConditionBase) -> "TransactWriteItemTypeDef":
        """A ConditionCheck: the transaction commits only if ``condition`` holds on the item at ``key``
        (a missing item has no attributes: ``Attr(...).exists()`` and comparisons are false). If it does
        not hold, its reason carries the item as it was (ALL_OLD), or none when there is no such item."""
        expressions = Expressions()
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
            expressions = Expressions()
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

    def transact_once(self, transaction: Transaction) -> None:
        """Commit ``transaction`` once; any cancellation (conflicts too) raises TransactionCancelled."""
        transact_once(self.client, transaction)

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
        expressions = Expressions()
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
        expressions = Expressions()
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


def _made_by(change: Update, expected_version: int, current: Item) -> bool:
    """Whether ``current`` is the item ``change`` made from ``expected_version``."""
    wanted = deserialize(serialize(change.set))
    return current.get("version") == expected_version + 1 and all(current.get(k) == v for k, v in wanted.items())


def _bumped(change: Update) -> Update:
    return Update(set=change.set, set_if_absent=change.set_if_absent, add={**change.add, "version": 1})


def _at_version(expected_version: int) -> ConditionBase:
    return Attr(PARTITION).exists() & Attr("version").eq(expected_version)
