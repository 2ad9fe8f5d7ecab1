"""What an order's Idempotency-Key record costs, per order and per replay, for each way to keep it.

Sizes are computed as DynamoDB bills them (bench.meter.item_size: attribute names plus values) on
the items the code writes, so the figures follow the code. Write units: 2 WCU per started KB per
item inside TransactWriteItems; read units: 1 RCU per started 4 KB, strongly consistent. A replay
(the same key again) sends the whole transaction again and it is cancelled on the key's condition;
DynamoDB charges a cancelled transaction's items as written (the prepare phase), so a replay costs
what the order cost, plus whatever the variant reads.

Variants:
- ``full``: the record keeps the created Order as JSON (what it kept before);
- ``compressed``: the same JSON, zlib-compressed in a binary attribute (what it keeps now);
- ``reference``: the record keeps the order id only; a replay reads the order back (one Query of
  header and lines) to answer it.
"""

import json
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from bench.markdown import table
from bench.meter import item_size
from shopfeed.commerce import events, items
from shopfeed.commerce.models import Order, OrderLine, OrderStatus
from shopfeed.commerce.orders import repository
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.clock import iso, new_id
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.types import Money

NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
LINE_COUNTS = (1, 3, 6, 10, 20, 48)


def order_of(lines: int) -> Order:
    order_lines = tuple(
        OrderLine(
            line_no=n, product_id=f"P-CATALOG-ITEM-{n:03d}", quantity=2, unit_price=Money(amount=1999, currency="EUR")
        )
        for n in range(1, lines + 1)
    )
    return Order(
        order_id=new_id(NOW),
        user_id="a1b2c3d4-5678-90ab-cdef-1234567890ab",
        status=OrderStatus.PLACED,
        placed_at=iso(NOW),
        updated_at=iso(NOW),
        total=Money(amount=2 * 1999 * lines, currency="EUR"),
        line_count=lines,
        version=1,
        lines=order_lines,
    )


def _wcu(item: dynamo.Item) -> int:
    return 2 * max(1, math.ceil(item_size(dynamo.serialize(item)) / 1024))


def _key_record(order: Order) -> dynamo.Item:
    request = IdempotentRequest.of(order.user_id, "0f8fad5b-d9cb-469f-a165-70867728950e", "place-order", {})
    put = idempotency.record_put("CommerceTable", request, repository.ORDER_SNAPSHOT, order, NOW)
    return dynamo.deserialize(put["Put"]["Item"])


def full(order: Order) -> dynamo.Item:
    record = _key_record(order)
    record["snapshot"] = zlib.decompress(record["snapshot"]).decode()
    return record


def compressed(order: Order) -> dynamo.Item:
    return _key_record(order)


def reference(order: Order) -> dynamo.Item:
    record = _key_record(order)
    record["snapshot"] = json.dumps({"order_id": order.order_id})
    return record


VARIANTS: dict[str, Callable[[Order], dynamo.Item]] = {"full": full, "compressed": compressed, "reference": reference}


@dataclass(frozen=True)
class Row:
    lines: int
    variant: str
    record_bytes: int
    record_wcu: int
    order_wcu: int  # the whole place-order transaction, the key record included
    replay_wcu: int
    replay_rcu: int


def _rest_of_order(order: Order) -> int:
    """WCU of the order's transaction without the key record (header, lines, stock, outbox)."""
    product = {
        "PK": "PRODUCT#P-CATALOG-ITEM-001",
        "SK": "META",
        "entity_type": "Product",
        "product_id": "P-CATALOG-ITEM-001",
        "name": "Catalog item",
        "description": "",
        "category": "tshirts",
        "price": {"amount": 1999, "currency": "EUR"},
        "available": 100,
        "created_at": iso(NOW),
        "updated_at": iso(NOW),
        "version": 1,
        "by_category_pk": "CATEGORY#tshirts",
        "by_category_sk": "P-CATALOG-ITEM-001",
    }
    written = [items.order_item(order), *(items.order_line_item(order, line) for line in order.lines)]
    written += [product] * len(order.lines) + [items.outbox_item(events.order_placed(order))]
    return sum(_wcu(item) for item in written)


def _read_back_rcu(order: Order) -> int:
    read = [items.order_item(order), *(items.order_line_item(order, line) for line in order.lines)]
    return max(1, math.ceil(sum(item_size(dynamo.serialize(item)) for item in read) / 4096))


def measure() -> list[Row]:
    rows = []
    for lines in LINE_COUNTS:
        order = order_of(lines)
        rest = _rest_of_order(order)
        for name, variant in VARIANTS.items():
            record = variant(order)
            record_wcu = _wcu(record)
            rows.append(
                Row(
                    lines=lines,
                    variant=name,
                    record_bytes=item_size(dynamo.serialize(record)),
                    record_wcu=record_wcu,
                    order_wcu=rest + record_wcu,
                    replay_wcu=rest + record_wcu,
                    replay_rcu=_read_back_rcu(order) if name == "reference" else 0,
                )
            )
    return rows


def markdown(rows: list[Row]) -> str:
    return table(
        ["lines", "variant", "key record (B)", "key record WCU", "WCU per order", "WCU per replay", "RCU per replay"],
        [[r.lines, r.variant, r.record_bytes, r.record_wcu, r.order_wcu, r.replay_wcu, r.replay_rcu] for r in rows],
        "rlrrrrr",
    )


if __name__ == "__main__":
    print(markdown(measure()))
