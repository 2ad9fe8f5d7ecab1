"""Builders for request bodies, and seeding through the API (or, where the API cannot, the repository).

Defaults are valid, so a test names only what it is about: ``product_body(available=0)``.
"""

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from local.harness.client import Answer, ApiClient
from shopfeed.commerce import events, items, keys
from shopfeed.commerce.models import Order, OrderLine, OrderStatus
from shopfeed.commerce.orders.repository import CommerceRepository
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import iso, new_id
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.types import Money

CURRENCY = "EUR"
PRICE = 1999


def money(amount: int = PRICE, currency: str = CURRENCY) -> dict[str, Any]:
    return {"amount": amount, "currency": currency}


def user_body(email: str | None = None, name: str = "Ada Lovelace", handle: str | None = None) -> dict[str, Any]:
    body = {"email": email or f"{uuid.uuid4().hex[:12]}@example.com", "name": name}
    return body | ({"handle": handle} if handle else {})


def product_body(
    product_id: str = "P-RED-TSHIRT",
    *,
    category: str = "tshirts",
    price: int = PRICE,
    currency: str = CURRENCY,
    available: int = 10,
    name: str | None = None,
) -> dict[str, Any]:
    return {
        "product_id": product_id,
        "name": name or product_id.removeprefix("P-").replace("-", " ").title(),
        "description": "",
        "category": category,
        "price": money(price, currency),
        "available": available,
    }


def line(
    product_id: str = "P-RED-TSHIRT", quantity: int = 1, price: int = PRICE, currency: str = CURRENCY
) -> dict[str, Any]:
    return {"product_id": product_id, "quantity": quantity, "unit_price": money(price, currency)}


def order_body(*lines: dict[str, Any]) -> dict[str, Any]:
    return {"lines": list(lines) or [line()]}


def idempotency_key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


def if_match(etag: str) -> dict[str, str]:
    return {"If-Match": etag}


# -- seeding through the API ----------------------------------------------------------------------


def register_user(client: ApiClient, **fields: Any) -> dict[str, Any]:
    answer = client.post("/users", user_body(**fields))
    assert answer.status == 201, answer.text
    return dict(answer.json)


def create_product(admin: ApiClient, product_id: str = "P-RED-TSHIRT", **fields: Any) -> dict[str, Any]:
    answer = admin.post("/products", product_body(product_id, **fields))
    assert answer.status == 201, answer.text
    return dict(answer.json)


def create_products(admin: ApiClient, count: int, *, prefix: str = "P-ITEM", **fields: Any) -> list[str]:
    """``count`` products ``<prefix>-01`` .. (ids sort in creation order); returns their ids."""
    ids = [f"{prefix}-{n:02d}" for n in range(1, count + 1)]
    for product_id in ids:
        create_product(admin, product_id, **fields)
    return ids


def place_order(client: ApiClient, *lines: dict[str, Any], key: str | None = None) -> Answer:
    headers = {"Idempotency-Key": key} if key else idempotency_key()
    return client.post("/orders", order_body(*lines), headers=headers)


def placed_order(client: ApiClient, *lines: dict[str, Any]) -> dict[str, Any]:
    answer = place_order(client, *lines)
    assert answer.status == 201, answer.text
    return dict(answer.json)


def pages(client: ApiClient, path: str, max_pages: int = 100, **query: Any) -> Iterator[dict[str, Any]]:
    """Every page of a list, following ``next_cursor`` until the last page (which has none)."""
    cursor = None
    for _ in range(max_pages):
        answer = client.get(path, query={**query, "cursor": cursor})
        assert answer.status == 200, answer.text
        yield answer.json
        cursor = answer.json["next_cursor"]
        if cursor is None:
            return
    raise AssertionError(f"{path} still had a next_cursor after {max_pages} pages")


# -- a controllable clock -------------------------------------------------------------------------


class SteppingClock:
    """Stands in for ``utc_now``: every reading is ``step`` later than the one before, so orders
    placed in a test have distinct, known placement times."""

    def __init__(self, start: datetime, step: timedelta = timedelta(seconds=1)) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now


# -- seeding below the API --------------------------------------------------------------------------


def order_id_in_shard(moment: datetime, shard: int) -> str:
    """A ULID of ``moment`` whose status index entry lands in write shard ``shard``."""
    while True:
        order_id = new_id(moment)
        if keys.order_status_shard(order_id) == shard:
            return order_id


def seed_order(
    store: CommerceRepository,
    user_id: str,
    moment: datetime,
    *,
    shard: int,
    product_id: str = "P-RED-TSHIRT",
    status: OrderStatus = OrderStatus.PLACED,
) -> Order:
    """An order placed at ``moment`` in status-index shard ``shard``, written by the repository's own
    place_order transaction (the API stamps orders with the current time and a random id)."""
    placed_at = iso(moment)
    order_line = OrderLine(line_no=1, product_id=product_id, quantity=1, unit_price=Money(**money()))
    order = Order(
        order_id=order_id_in_shard(moment, shard),
        user_id=user_id,
        status=status,
        placed_at=placed_at,
        updated_at=placed_at,
        total=order_line.line_total,
        line_count=1,
        version=1,
        lines=(order_line,),
    )
    request = IdempotentRequest(user_id, order.order_id, fingerprint=order.order_id)
    store.place_order(order, events.order_placed(order), request, moment)
    return order


# -- proof of purchase ------------------------------------------------------------------------------


def record_purchase(
    user_id: str, product_id: str, orders: int = 1, *, table: str = "CommerceTable", client: Any = None
) -> None:
    """The proof of purchase exactly as payments write it (``items.purchase_change``: an approved
    payment adds 1 per order, a cancelled Paid order takes 1 back), created if absent.

    ``client`` is a DynamoDB client of another engine (the local stack's); the shared one by default."""
    key, change = items.purchase_change(user_id, product_id, orders)
    dynamo.Table(client or clients.dynamodb(), table).update(key, change)


def review_body(
    rating: int = 5, title: str = "Great shirt", text: str = "Soft cotton, true to size."
) -> dict[str, Any]:
    return {"rating": rating, "title": title, "text": text}


def reviewed(client: ApiClient, product_id: str, *, table: str = "CommerceTable", **fields: Any) -> dict[str, Any]:
    """A review by ``client``'s user, who is recorded as a buyer of the product first."""
    assert client.sub is not None
    record_purchase(client.sub, product_id, table=table)
    answer = client.post(f"/products/{product_id}/reviews", review_body(**fields))
    assert answer.status == 201, answer.text
    return dict(answer.json)
