"""In-memory implementations of shopfeed's ports, for unit tests.

They answer and fail like the real adapters; tests/integration/test_commerce_contract.py runs the same
scenarios against both so a fake cannot drift from the DynamoDB-backed original.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from shopfeed.commerce.catalog.repository import RESTOCK_SNAPSHOT
from shopfeed.commerce.errors import InsufficientStock, PriceChange, PriceChanged, StockShortage, UnknownProducts
from shopfeed.commerce.models import (
    Customer,
    Order,
    OrderLine,
    OrderMove,
    OrderStatus,
    OrderSummary,
    Product,
    ProductSummary,
    Restocked,
)
from shopfeed.commerce.orders.repository import ORDER_SNAPSHOT
from shopfeed.commerce.types import MAX_STOCK
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.errors import (
    AlreadyExists,
    EmailInUse,
    IdempotencyKeyReused,
    InvalidRequest,
    NotFound,
    StaleVersion,
)
from shopfeed.platform.idempotency import Created, IdempotentRequest, Snapshot
from shopfeed.platform.models import Page
from shopfeed.platform.outbox import OutboxEvent

Position = str | int


@dataclass(frozen=True)
class _KeyRecord:
    fingerprint: str
    # As the repository stores it (snapshot JSON and version): a replay answers a copy read back
    # through the same Snapshot, never the object the first caller holds.
    attributes: dict[str, Any]


def _summary(order: Order) -> OrderSummary:
    return OrderSummary.model_validate(order.model_dump(include=set(OrderSummary.model_fields)))


def _newest_first(order: Order) -> str:
    return f"{order.placed_at}#{order.order_id}"


class InMemoryCommerce:
    """The ``Commerce`` port in memory, with CommerceRepository's observable semantics.

    Every write checks everything before it changes anything, as one DynamoDB transaction would, so a
    refused write leaves no trace. Lists page by position with cursors signed and bound to their query.
    """

    def __init__(self, cursors: CursorCodec | None = None) -> None:
        self._cursors = cursors or CursorCodec(b"in-memory-commerce")
        self._customers: dict[str, Customer] = {}
        self._email_owners: dict[str, str] = {}
        self._products: dict[str, Product] = {}
        self._orders: dict[str, Order] = {}
        self._keys: dict[tuple[str, str], _KeyRecord] = {}
        self._events: list[OutboxEvent] = []
        self._history: dict[str, list[OrderMove]] = {}

    @property
    def events(self) -> tuple[OutboxEvent, ...]:
        """The outbox: every integration event written, in write order."""
        return tuple(self._events)

    # -- customers ---------------------------------------------------------------------------

    def add_customer(self, customer: Customer) -> None:
        if customer.user_id in self._customers:
            raise AlreadyExists("user", customer.user_id)
        if customer.email_verified and customer.email.lower() in self._email_owners:
            raise EmailInUse()
        self._customers[customer.user_id] = customer
        if customer.email_verified:
            self._email_owners[customer.email.lower()] = customer.user_id

    def get_customer(self, user_id: str) -> Customer | None:
        return self._customers.get(user_id)

    def email_owner(self, email: str) -> str | None:
        return self._email_owners.get(email.lower())

    def update_customer(self, user_id: str, expected_version: int, changes: dict[str, Any], now: str) -> Customer:
        updated = _versioned("user", user_id, self._customers.get(user_id), expected_version, changes, now)
        self._customers[user_id] = updated
        return updated

    # -- catalog and stock -------------------------------------------------------------------

    def add_product(self, product: Product) -> None:
        if product.product_id in self._products:
            raise AlreadyExists("product", product.product_id)
        self._products[product.product_id] = product

    def get_product(self, product_id: str) -> Product | None:
        return self._products.get(product_id)

    def update_product(self, product_id: str, expected_version: int, changes: dict[str, Any], now: str) -> Product:
        updated = _versioned("product", product_id, self._products.get(product_id), expected_version, changes, now)
        self._products[product_id] = updated
        return updated

    def list_products_in_category(self, category: str, limit: int, cursor: str | None) -> Page[ProductSummary]:
        in_category = sorted((p for p in self._products.values() if p.category == category), key=lambda p: p.product_id)
        return self._page(
            f"products-by-category:{category}",
            in_category,
            position=lambda p: p.product_id,
            view=lambda p: ProductSummary.model_validate(p.model_dump(include=set(ProductSummary.model_fields))),
            limit=limit,
            cursor=cursor,
        )

    def restock(
        self, product_id: str, quantity: int, request: IdempotentRequest, restocked: Restocked, now: Any
    ) -> Created[Restocked]:
        replayed = self._replay(request, RESTOCK_SNAPSHOT)
        if replayed:
            return replayed
        product = self._products.get(product_id)
        if product is None:
            raise NotFound("product", product_id)
        if product.available + quantity > MAX_STOCK:
            raise InvalidRequest(f"Restocking {quantity} would pass the maximum stock of {MAX_STOCK}.")
        # Stock moves without a version bump: version guards what editors change, not the counter.
        self._products[product_id] = product.model_copy(update={"available": product.available + quantity})
        self._remember(request, RESTOCK_SNAPSHOT, restocked)
        return Created(restocked)

    # -- orders ------------------------------------------------------------------------------

    def place_order(self, order: Order, event: OutboxEvent, request: IdempotentRequest, now: Any) -> Created[Order]:
        replayed = self._replay(request, ORDER_SNAPSHOT)
        if replayed:
            return replayed
        self._check_stock(order.lines)
        for line in order.lines:
            product = self._products[line.product_id]
            self._products[line.product_id] = product.model_copy(
                update={"available": product.available - line.quantity}
            )
        self._orders[order.order_id] = order
        self._events.append(event)
        self._history[order.order_id] = [OrderMove.of(None, order, order.user_id, "placed")]
        self._remember(request, ORDER_SNAPSHOT, order)
        return Created(order)

    def _check_stock(self, lines: Sequence[OrderLine]) -> None:
        """The real transaction reports every failed line; unknown beats short beats repriced."""
        unknown = [line.product_id for line in lines if line.product_id not in self._products]
        if unknown:
            raise UnknownProducts(unknown)
        stocked = [(line, self._products[line.product_id]) for line in lines]
        short = [
            StockShortage(line.product_id, line.quantity, product.available)
            for line, product in stocked
            if product.available < line.quantity
        ]
        if short:
            raise InsufficientStock(short)
        repriced = [
            PriceChange(line.product_id, line.unit_price.model_dump(), product.price.model_dump())
            for line, product in stocked
            if product.price != line.unit_price
        ]
        if repriced:
            raise PriceChanged(repriced)

    def get_order(self, order_id: str) -> Order | None:
        return self._orders.get(order_id)

    def list_order_lines(self, order_id: str, owner: str | None, limit: int, cursor: str | None) -> Page[OrderLine]:
        order = self._orders.get(order_id)
        visible = order is not None and owner in (None, order.user_id)
        return self._page(
            f"order-lines:{order_id}:{owner or '*'}",
            list(order.lines) if order is not None and visible else [],
            position=lambda line: line.line_no,
            view=lambda line: line,
            limit=limit,
            cursor=cursor,
        )

    def list_orders_of_user(self, user_id: str, limit: int, cursor: str | None) -> Page[OrderSummary]:
        mine = [o for o in self._orders.values() if o.user_id == user_id]
        return self._page(
            f"orders-by-user:{user_id}",
            sorted(mine, key=_newest_first, reverse=True),
            position=_newest_first,
            view=_summary,
            limit=limit,
            cursor=cursor,
            descending=True,
        )

    def list_orders_by_status(
        self, status: OrderStatus, month: str, limit: int, cursor: str | None
    ) -> Page[OrderSummary]:
        matching = [o for o in self._orders.values() if o.status == status and o.placed_at.startswith(month)]
        return self._page(
            f"orders-by-status:{status}:{month}",
            sorted(matching, key=_newest_first, reverse=True),
            position=_newest_first,
            view=_summary,
            limit=limit,
            cursor=cursor,
            descending=True,
        )

    def list_order_history(self, order_id: str, owner: str | None, limit: int, cursor: str | None) -> Page[OrderMove]:
        moves = [m for m in self._history.get(order_id, []) if owner in (None, m.user_id)]
        return self._page(
            f"order-history:{order_id}:{owner or '*'}",
            moves,
            position=lambda move: move.version,
            view=lambda move: move,
            limit=limit,
            cursor=cursor,
        )

    def cancel_order(
        self, order: Order, cancelled: Order, event: OutboxEvent, move: OrderMove, refund_id: str | None = None
    ) -> None:
        stored = self._orders.get(order.order_id)
        if stored is None:
            raise NotFound("order", order.order_id)
        if (stored.version, stored.status) != (order.version, order.status):
            raise StaleVersion("order", order.order_id, stored.version)
        # The header changes; the lines stay as they were written.
        self._orders[order.order_id] = cancelled.model_copy(update={"lines": stored.lines})
        for line in order.lines:
            product = self._products.get(line.product_id)
            if product is not None:
                self._products[line.product_id] = product.model_copy(
                    update={"available": product.available + line.quantity}
                )
        self._events.append(event)
        self._history[order.order_id].append(move)

    # -- building blocks ---------------------------------------------------------------------

    def _replay[M: BaseModel](self, request: IdempotentRequest, snapshot: Snapshot[M]) -> Created[M] | None:
        record = self._keys.get((request.user_id, request.key))
        if record is None:
            return None
        if record.fingerprint != request.fingerprint:
            raise IdempotencyKeyReused(request.key)
        return Created(snapshot.load(record.attributes), replayed=True)

    def _remember[M: BaseModel](self, request: IdempotentRequest, snapshot: Snapshot[M], value: M) -> None:
        self._keys[(request.user_id, request.key)] = _KeyRecord(request.fingerprint, snapshot.attributes(value))

    def _page[R, V](
        self,
        scope: str,
        rows: Sequence[R],
        *,
        position: Callable[[R], Position],
        view: Callable[[R], V],
        limit: int,
        cursor: str | None,
        descending: bool = False,
    ) -> Page[V]:
        """``rows`` in list order; the cursor holds the position of the last row served, so rows
        written or moved between two pages are handled like a DynamoDB ExclusiveStartKey would."""
        after = self._cursors.decode(scope, cursor)
        if after is not None:
            rows = [r for r in rows if (position(r) < after if descending else position(r) > after)]
        page = list(rows[:limit])
        next_cursor = self._cursors.encode(scope, position(page[-1])) if len(rows) > limit else None
        return Page(items=[view(r) for r in page], next_cursor=next_cursor)


def _versioned[M: (Customer, Product)](
    kind: str, ident: str, current: M | None, expected_version: int, changes: dict[str, Any], now: str
) -> M:
    if current is None:
        raise NotFound(kind, ident)
    if current.version != expected_version:
        raise StaleVersion(kind, ident, current.version)
    return type(current).model_validate(
        {**current.model_dump(), **changes, "version": current.version + 1, "updated_at": now}
    )
