"""Orders placed long ago, to try the archive under ``make dev``: ``python -m local.old_orders``.

The API stamps an order with the time it is placed, so orders old enough to archive are written
straight to the running stack's CommerceTable, as the place-order transaction writes them (header and
lines, each line one of the seed's products; the stock they would have taken is left alone). They are
Delivered: an unpaid (Placed) order holds stock and is never archived, and a Placed one this old would
be expired by the payment window's sweep first.
"""

import argparse
import json
import sys
import urllib.request
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from local import seed
from local.engines import CREDENTIALS, REGION
from shopfeed.commerce import items
from shopfeed.commerce.models import Order, OrderLine, OrderStatus
from shopfeed.platform import batch_writes, dynamo
from shopfeed.platform.clock import iso, new_id
from shopfeed.platform.types import Money


def old_orders(count: int, days_ago: float, user_id: str, now: datetime) -> list[Order]:
    """``count`` orders of ``user_id``, the youngest placed ``days_ago`` days before ``now``, 5 hours apart."""
    orders = []
    for n in range(count):
        moment = now - timedelta(days=days_ago, hours=5 * n)
        product = seed.PRODUCTS[n % len(seed.PRODUCTS)]
        line = OrderLine(
            line_no=1,
            product_id=product["product_id"],
            quantity=1 + n % 3,
            unit_price=Money.model_validate(product["price"]),
        )
        placed = iso(moment)
        orders.append(
            Order(
                order_id=new_id(moment),
                user_id=user_id,
                status=OrderStatus.DELIVERED,
                placed_at=placed,
                updated_at=placed,
                total=line.line_total,
                line_count=1,
                version=1,
                lines=(line,),
            )
        )
    return orders


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--stack", default="http://127.0.0.1:3000", help="the running local stack")
    parser.add_argument("--count", type=int, default=150)
    parser.add_argument("--days-ago", type=float, default=100, help="age of the youngest order (the cutoff is 90)")
    parser.add_argument("--user", default=seed.DEMO_USER)
    args = parser.parse_args(argv)
    with urllib.request.urlopen(f"{args.stack}/__local/stack", timeout=5) as answer:
        page = json.load(answer)
    client: Any = boto3.client(
        "dynamodb",
        endpoint_url=page["endpoints"]["dynamodb"],
        region_name=REGION,
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )
    orders = old_orders(args.count, args.days_ago, args.user, datetime.now(UTC))
    written = [
        item for order in orders for item in (items.order_item(order), items.order_line_item(order, order.lines[0]))
    ]
    requests: list[Any] = [{"PutRequest": {"Item": dynamo.serialize(item)}} for item in written]
    batch_writes.write_all(client, page["resources"]["CommerceTable"]["name"], requests)
    newest, oldest = orders[0], orders[-1]
    print(
        f"{len(orders)} orders of {args.user} placed {oldest.placed_at} .. {newest.placed_at}; newest {newest.order_id}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
