"""CommerceTable: every DynamoDB call of the commerce context.

Returns domain models, never raw items; turns ConditionalCheckFailed and TransactionCanceled
reasons into domain errors right here; owns the pagination cursors of its lists.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from shopfeed.commerce import items, keys
from shopfeed.commerce.models import (
    Customer,
    Order,
    OrderLine,
    OrderStatus,
    OrderSummary,
    OutboxEvent,
    Page,
    Product,
    ProductSummary,
)
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.errors import (
    AlreadyExists,
    Contention,
    EmailInUse,
    InsufficientStock,
    InvalidRequest,
    NotFound,
    PriceChange,
    PriceChanged,
    StaleVersion,
    StockShortage,
    UnknownProducts,
)
from shopfeed.platform.idempotency import IdempotentRequest, StoredResponse
from shopfeed.platform.pagination import query_page
from shopfeed.platform.types import MAX_STOCK

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

_TABLE_KEY = ("PK", "SK")
_INDEX_KEYS = {
    keys.PRODUCTS_BY_CATEGORY: (*_TABLE_KEY, "by_category_pk", "by_category_sk"),
    keys.ORDERS_BY_USER: (*_TABLE_KEY, "by_user_pk", "by_user_sk"),
    keys.ORDERS_BY_STATUS: (*_TABLE_KEY, "by_status_pk", "by_status_sk"),
}


def _key(key: Mapping[str, str]) -> dict[str, Any]:
    return dynamo.serialize(key)


class CommerceRepository:
    def __init__(self, client: "DynamoDBClient", table: str, cursors: CursorCodec) -> None:
        self._client = client
        self._table = table
        self._cursors = cursors

    # -- customers ---------------------------------------------------------------------------

    def add_customer(self, customer: Customer) -> None:
        """Profile and, for a verified address, its unique-email guard in one transaction: neither exists
        without the other."""
        writes = [self._put_new(items.customer_item(customer))]
        if customer.email_verified:
            writes.append(self._put_new(items.email_guard_item(customer)))
        try:
            dynamo.transact_write(self._client, writes)
        except dynamo.TransactionCancelled as cancelled:
            profile, *guard = cancelled.reasons
            if profile.failed_condition:
                raise AlreadyExists("user", customer.user_id) from cancelled
            if guard and guard[0].failed_condition:
                raise EmailInUse() from cancelled
            raise
        except dynamo.TransactionContended:
            raise Contention(f"user {customer.user_id}") from None

    def get_customer(self, user_id: str) -> Customer | None:
        item = self._get(keys.user(user_id))
        return items.customer_from(item) if item else None

    def update_customer(self, user_id: str, expected_version: int, changes: Mapping[str, Any], now: str) -> Customer:
        item = self._update_versioned("user", user_id, keys.user(user_id), expected_version, changes, now)
        return items.customer_from(item)

    # -- catalog and stock -------------------------------------------------------------------

    def add_product(self, product: Product) -> None:
        try:
            self._client.put_item(**self._put_new(items.product_item(product))["Put"])
        except ClientError as error:
            if dynamo.is_conditional_failure(error):
                raise AlreadyExists("product", product.product_id) from error
            raise

    def get_product(self, product_id: str) -> Product | None:
        item = self._get(keys.product(product_id))
        return items.product_from(item) if item else None

    def update_product(self, product_id: str, expected_version: int, changes: Mapping[str, Any], now: str) -> Product:
        changes = dict(changes)
        if "category" in changes:
            changes.update(keys.product_by_category(changes["category"], product_id))
        item = self._update_versioned("product", product_id, keys.product(product_id), expected_version, changes, now)
        return items.product_from(item)

    def list_products_in_category(self, category: str, limit: int, cursor: str | None) -> Page[ProductSummary]:
        found, next_cursor = query_page(
            self._client,
            self._cursors,
            scope=f"products-by-category:{category}",
            key_attributes=_INDEX_KEYS[keys.PRODUCTS_BY_CATEGORY],
            limit=limit,
            cursor=cursor,
            TableName=self._table,
            IndexName=keys.PRODUCTS_BY_CATEGORY,
            KeyConditionExpression="by_category_pk = :pk",
            ExpressionAttributeValues={":pk": dynamo.value(keys.category_partition(category))},
        )
        return Page(items=[items.product_summary_from(i) for i in found], next_cursor=next_cursor)

    def restock(
        self,
        product_id: str,
        quantity: int,
        request: IdempotentRequest,
        response: StoredResponse,
        now: datetime,
    ) -> StoredResponse:
        """Add stock and record the Idempotency-Key in one transaction."""
        transaction: list[TransactWriteItemTypeDef] = [
            {
                "Update": {
                    "TableName": self._table,
                    "Key": _key(keys.product(product_id)),
                    "UpdateExpression": "ADD available :q",
                    # The bound is checked where the sum is made: stock can never pass MAX_STOCK.
                    "ConditionExpression": "attribute_exists(PK) AND available <= :ceiling",
                    "ExpressionAttributeValues": {
                        ":q": dynamo.value(quantity),
                        ":ceiling": dynamo.value(MAX_STOCK - quantity),
                    },
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            },
            idempotency.record_put(self._table, request, response, now),
        ]
        try:
            dynamo.transact_write(self._client, transaction)
        except dynamo.TransactionCancelled as cancelled:
            replayed = idempotency.replay(request, cancelled.reasons[-1])
            if replayed:
                return replayed
            stock = cancelled.reasons[0]
            if stock.failed_condition and stock.item is None:
                raise NotFound("product", product_id) from cancelled
            if stock.failed_condition:
                raise InvalidRequest(
                    f"Restocking {quantity} would take product {product_id} past the maximum stock of {MAX_STOCK}."
                ) from cancelled
            raise
        except dynamo.TransactionContended:
            raise Contention(f"product {product_id}") from None
        return response

    # -- orders ------------------------------------------------------------------------------

    def place_order(
        self,
        order: Order,
        event: OutboxEvent,
        request: IdempotentRequest,
        response: StoredResponse,
        now: datetime,
    ) -> StoredResponse:
        """One TransactWriteItems: header, lines, guarded stock decrements, outbox event, key record.

        A retry with the same key is answered from the key record returned in CancellationReasons.
        """
        decrements = [self._decrement_stock(line) for line in order.lines]
        transaction: list[TransactWriteItemTypeDef] = [
            self._put_new(items.order_item(order)),
            *(self._put(items.order_line_item(order, line)) for line in order.lines),
            *decrements,
            self._put_new(items.outbox_item(event)),
            idempotency.record_put(self._table, request, response, now),
        ]
        try:
            dynamo.transact_write(self._client, transaction)
        except dynamo.TransactionCancelled as cancelled:
            replayed = idempotency.replay(request, cancelled.reasons[-1])
            if replayed:
                return replayed
            first = 1 + len(order.lines)
            self._raise_stock_problems(order.lines, cancelled.reasons[first : first + len(order.lines)])
            raise
        except dynamo.TransactionContended:
            raise Contention("stock of the ordered products") from None
        return response

    def _restock_line(self, line: OrderLine) -> "TransactWriteItemTypeDef":
        return {
            "Update": {
                "TableName": self._table,
                "Key": _key(keys.product(line.product_id)),
                "UpdateExpression": "ADD available :q",
                "ExpressionAttributeValues": {":q": dynamo.value(line.quantity)},
            }
        }

    def _decrement_stock(self, line: OrderLine) -> "TransactWriteItemTypeDef":
        # Price is part of the condition: the order is charged exactly what the client quoted, and a
        # concurrent price change cancels it instead of being read and written in two steps.
        return {
            "Update": {
                "TableName": self._table,
                "Key": _key(keys.product(line.product_id)),
                "UpdateExpression": "SET available = available - :q",
                "ConditionExpression": (
                    "attribute_exists(PK) AND available >= :q AND price.amount = :amount AND price.currency = :cur"
                ),
                "ExpressionAttributeValues": {
                    ":q": dynamo.value(line.quantity),
                    ":amount": dynamo.value(line.unit_price.amount),
                    ":cur": dynamo.value(line.unit_price.currency),
                },
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        }

    @staticmethod
    def _raise_stock_problems(lines: Sequence[OrderLine], reasons: Sequence[dynamo.Reason]) -> None:
        unknown, short, repriced = [], [], []
        for line, reason in zip(lines, reasons, strict=True):
            if not reason.failed_condition:
                continue
            if reason.item is None:
                unknown.append(line.product_id)
                continue
            product = items.product_from(reason.item)
            if product.available < line.quantity:
                short.append(StockShortage(line.product_id, line.quantity, product.available))
            if product.price != line.unit_price:
                repriced.append(PriceChange(line.product_id, line.unit_price.model_dump(), product.price.model_dump()))
        if unknown:
            raise UnknownProducts(unknown)
        if short:
            raise InsufficientStock(short)
        if repriced:
            raise PriceChanged(repriced)

    def get_order(self, order_id: str) -> Order | None:
        """Header and lines in one strongly consistent Query: LINE# sorts before META."""
        response = self._client.query(
            TableName=self._table,
            KeyConditionExpression="PK = :pk AND SK BETWEEN :first AND :last",
            ExpressionAttributeValues={
                ":pk": dynamo.value(keys.order_partition(order_id)),
                ":first": dynamo.value(keys.LINE),
                ":last": dynamo.value(keys.META),
            },
            ConsistentRead=True,
        )
        found = [dynamo.deserialize(i) for i in response["Items"]]
        header = [i for i in found if i["SK"] == keys.META]
        if not header:
            return None
        return items.order_from(header[0], [i for i in found if i["SK"] != keys.META])

    def list_order_lines(self, order_id: str, owner: str | None, limit: int, cursor: str | None) -> Page[OrderLine]:
        """Lines in order. With ``owner``, lines of someone else's order are filtered out in the same
        Query, so the caller is authorised without reading the header first."""
        values = {":pk": dynamo.value(keys.order_partition(order_id)), ":line": dynamo.value(keys.LINE)}
        owned: dict[str, Any] = {}
        if owner is not None:
            owned["FilterExpression"] = "user_id = :owner"
            values[":owner"] = dynamo.value(owner)
        found, next_cursor = query_page(
            self._client,
            self._cursors,
            scope=f"order-lines:{order_id}:{owner or '*'}",
            key_attributes=_TABLE_KEY,
            limit=limit,
            cursor=cursor,
            TableName=self._table,
            KeyConditionExpression="PK = :pk AND begins_with(SK, :line)",
            ExpressionAttributeValues=values,
            **owned,
        )
        return Page(items=[items.order_line_from(i) for i in found], next_cursor=next_cursor)

    def list_orders_of_user(self, user_id: str, limit: int, cursor: str | None) -> Page[OrderSummary]:
        found, next_cursor = query_page(
            self._client,
            self._cursors,
            scope=f"orders-by-user:{user_id}",
            key_attributes=_INDEX_KEYS[keys.ORDERS_BY_USER],
            limit=limit,
            cursor=cursor,
            TableName=self._table,
            IndexName=keys.ORDERS_BY_USER,
            KeyConditionExpression="by_user_pk = :pk",
            ExpressionAttributeValues={":pk": dynamo.value(keys.user_orders_partition(user_id))},
            ScanIndexForward=False,
        )
        return Page(items=[items.order_summary_from(i) for i in found], next_cursor=next_cursor)

    def list_orders_by_status(
        self, status: OrderStatus, month: str, limit: int, cursor: str | None
    ) -> Page[OrderSummary]:
        """Scatter-gather over the write shards of one status and month, merged newest first.

        One Query per shard that still has items. The cursor remembers, per shard, the last item this
        page consumed (or that the shard is exhausted), so the next page resumes every shard exactly.
        """
        scope = f"orders-by-status:{status}:{month}"
        positions: dict[str, Any] = self._cursors.decode(scope, cursor) or {
            str(shard): None for shard in range(keys.ORDER_STATUS_SHARDS)
        }
        key_names = _INDEX_KEYS[keys.ORDERS_BY_STATUS]
        candidates: list[tuple[str, str, dict[str, Any]]] = []
        exhausted: dict[str, bool] = {}
        for shard, position in positions.items():
            if position == "done":
                continue
            query: dict[str, Any] = {
                "TableName": self._table,
                "IndexName": keys.ORDERS_BY_STATUS,
                "KeyConditionExpression": "by_status_pk = :pk",
                "ExpressionAttributeValues": {":pk": dynamo.value(keys.status_partition(status, month, int(shard)))},
                "ScanIndexForward": False,
                # One more than a page: DynamoDB answers a LastEvaluatedKey whenever it reaches Limit,
                # so with Limit = limit a shard ending exactly on the page would cost an empty last page.
                "Limit": limit + 1,
            }
            if position:
                query["ExclusiveStartKey"] = position
            response = self._client.query(**query)
            exhausted[shard] = "LastEvaluatedKey" not in response
            candidates += [(raw["by_status_sk"]["S"], shard, raw) for raw in response["Items"]]

        candidates.sort(key=lambda c: c[0], reverse=True)
        page, rest = candidates[:limit], candidates[limit:]
        next_positions = dict(positions)
        for _, shard, raw in page:
            next_positions[shard] = {name: raw[name] for name in key_names}
        left_over = {shard for _, shard, _ in rest}
        for shard, done in exhausted.items():
            if done and shard not in left_over:
                next_positions[shard] = "done"
        more = any(p != "done" for p in next_positions.values())
        return Page(
            items=[items.order_summary_from(dynamo.deserialize(raw)) for _, _, raw in page],
            next_cursor=self._cursors.encode(scope, next_positions) if more else None,
        )

    def cancel_order(self, order: Order, cancelled: Order, event: OutboxEvent) -> None:
        """Guarded transition (version and state), restock every line, outbox event: one transaction."""
        transaction: list[TransactWriteItemTypeDef] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": dynamo.serialize(items.order_item(cancelled)),
                    "ConditionExpression": "version = :v AND #status = :status",
                    "ExpressionAttributeNames": {"#status": "status"},
                    "ExpressionAttributeValues": {
                        ":v": dynamo.value(order.version),
                        ":status": dynamo.value(order.status.value),
                    },
                }
            },
            *(self._restock_line(line) for line in order.lines),
            self._put_new(items.outbox_item(event)),
        ]
        try:
            dynamo.transact_write(self._client, transaction)
        except dynamo.TransactionCancelled as error:
            if error.reasons[0].failed_condition:
                raise StaleVersion("order", order.order_id, None) from error
            raise
        except dynamo.TransactionContended:
            raise Contention(f"order {order.order_id}") from None

    # -- building blocks ---------------------------------------------------------------------

    def _get(self, key: Mapping[str, str]) -> dynamo.Item | None:
        response = self._client.get_item(TableName=self._table, Key=_key(key), ConsistentRead=True)
        return dynamo.deserialize(response["Item"]) if "Item" in response else None

    def _put(self, item: Mapping[str, Any]) -> "TransactWriteItemTypeDef":
        return {"Put": {"TableName": self._table, "Item": dynamo.serialize(item)}}

    def _put_new(self, item: Mapping[str, Any]) -> "TransactWriteItemTypeDef":
        return {
            "Put": {
                "TableName": self._table,
                "Item": dynamo.serialize(item),
                "ConditionExpression": "attribute_not_exists(PK)",
            }
        }

    def _update_versioned(
        self,
        kind: str,
        ident: str,
        key: Mapping[str, str],
        expected_version: int,
        changes: Mapping[str, Any],
        now: str,
    ) -> dynamo.Item:
        """SET the changes and bump ``version`` only if the stored version is the one the client read."""
        names = {f"#f{i}": name for i, name in enumerate(changes)}
        values = {f":f{i}": dynamo.value(v) for i, v in enumerate(changes.values())}
        assignments = [f"#f{i} = :f{i}" for i in range(len(changes))]
        optional: dict[str, Any] = {"ExpressionAttributeNames": names} if names else {}
        try:
            response = self._client.update_item(
                TableName=self._table,
                Key=_key(key),
                UpdateExpression="SET " + ", ".join([*assignments, "version = version + :one", "updated_at = :now"]),
                ConditionExpression="attribute_exists(PK) AND version = :expected",
                **optional,
                ExpressionAttributeValues={
                    **values,
                    ":one": dynamo.value(1),
                    ":now": dynamo.value(now),
                    ":expected": dynamo.value(expected_version),
                },
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if not dynamo.is_conditional_failure(error):
                raise
            current = dynamo.old_item(error)
            if current is None:
                raise NotFound(kind, ident) from error
            raise StaleVersion(kind, ident, int(current["version"])) from error
        return dynamo.deserialize(response["Attributes"])
