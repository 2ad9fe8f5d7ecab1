"""CommerceTable: the DynamoDB calls of the cart, on the platform's table gateway.

Every change of a cart is one TransactWriteItems guarded by the version of its header, so changes
are serialised per cart: its line count (the bound) is counted from the read, and a checkout orders
exactly the lines it read. A checkout is the order placement's own transaction (``orders``), with the
cart's items added to it.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from boto3.dynamodb.conditions import Attr, ConditionBase

from shopfeed.commerce import items, keys
from shopfeed.commerce.models import Cart, CartLine, Order, Product
from shopfeed.commerce.orders.repository import ORDER_SNAPSHOT, CommerceRepository
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.dynamo import BASE_TABLE, PARTITION, Transaction, Update
from shopfeed.platform.errors import StaleVersion
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.outbox import OutboxEvent

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

# Transaction labels: cancellation reasons are read by these, never by position.
_HEADER = "cart"
_LINE = "cart-line:"


class CartRepository:
    """Carts, and their checkout through the order placement of ``orders``."""

    def __init__(self, table: dynamo.Table, orders: CommerceRepository) -> None:
        self._table = table
        self._orders = orders

    def read(self, user_id: str) -> Cart:
        """The cart as stored (expired or not): header and lines in one strongly consistent Query.

        Bounded: a cart holds at most MAX_CART_LINES small lines, far below one Query page (1 MB)."""
        response = self._table.query(
            BASE_TABLE,
            keys.cart_partition(user_id),
            where=lambda sk: sk.begins_with(keys.CART),
            consistent=True,
        )
        return items.cart_from(user_id, [dynamo.deserialize(i) for i in response["Items"]])

    def product(self, product_id: str) -> Product | None:
        """The product as a cart line needs it: its price (one GetItem; not its stock)."""
        return self._orders.get_product(product_id, stock=False)

    def save(self, before: Cart, after: Cart, put: Sequence[CartLine], delete: Sequence[str]) -> None:
        """Write ``after``: its header, the lines of ``put``, the deletes of ``delete`` (product ids), in one
        transaction that commits only if the header is still at ``before``'s version (else StaleVersion)."""
        transaction = Transaction()
        transaction.add(_HEADER, self._header_op(before, after))
        for line in put:
            transaction.add(_LINE + line.product_id, self._table.put_op(items.cart_line_item(after.user_id, line)))
        for product_id in delete:
            transaction.add(_LINE + product_id, self._table.delete_op(keys.cart_line(after.user_id, product_id)))
        try:
            self._table.transact(transaction, busy="your cart")
        except dynamo.TransactionCancelled as cancelled:
            _raise_if_changed(before, cancelled)
            raise

    def check_out(
        self, cart: Cart, emptied: Cart, order: Order, event: OutboxEvent, request: IdempotentRequest, now: datetime
    ) -> Created[Order]:
        """Place ``order`` (``orders.place_order``: stock, lines, event, key record) and, in the same
        transaction, delete the cart's lines and move its header to ``emptied``, if the cart is still
        the one read. A retry with the same key answers the order; a price changed since a line was put
        cancels it all (PriceChanged, from the placement's own stock conditions)."""
        also: list[tuple[str, TransactWriteItemTypeDef]] = [(_HEADER, self._header_op(cart, emptied))]
        also += [
            (_LINE + line.product_id, self._table.delete_op(keys.cart_line(cart.user_id, line.product_id)))
            for line in cart.lines
        ]
        try:
            return self._orders.place_order(order, event, request, now, also=also)
        except dynamo.TransactionCancelled as cancelled:
            _raise_if_changed(cart, cancelled)
            raise

    def replay(self, request: IdempotentRequest) -> Created[Order] | None:
        """The order a checkout with this key placed, if one did (one GetItem of the key record)."""
        return idempotency.recorded(self._table, request, ORDER_SNAPSHOT)

    def _header_op(self, before: Cart, after: Cart) -> "TransactWriteItemTypeDef":
        guard: ConditionBase = Attr("version").eq(before.version) if before.version else Attr(PARTITION).not_exists()
        change = items.cart_header_change(after)
        bumped = Update(set=change.set, set_if_absent=change.set_if_absent, add={"version": 1})
        return self._table.update_op(keys.cart(after.user_id), bumped, condition=guard, return_old_on_failure=True)


def _raise_if_changed(read: Cart, cancelled: dynamo.TransactionCancelled) -> None:
    header = cancelled.reason(_HEADER)
    if header.failed_condition:
        current = int(header.item["version"]) if header.item else 0
        raise StaleVersion("cart", read.user_id, current) from cancelled
