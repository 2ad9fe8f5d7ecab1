"""Give items stored before an index existed that index's keys: ``make backfill`` locally, or an
operator in AWS once the indexes are deployed::

    python -m shopfeed.commerce.archive.backfill --table shopfeed-prod-CommerceTable-XXXX --rate 200

Order headers get their OrdersByAge keys (from ``placed_at``), products their Catalog keys: without
them the archive never finds an old order and the snapshot never lists a product. A paged Scan at a
bounded rate (an admin job, like ``make reindex``); each update is conditioned on the keys still
missing, so running it again, or while orders are placed, changes nothing twice. Status changes and
stock moves never touch these keys, so a concurrent write cannot undo one.

Products stored before stock was kept in buckets also move their single stock number into a layout
and one bucket of the default warehouse (``inventory.stock.move_into_buckets``): one transaction per
product, conditioned on the number still being the one read (a restock or a cancel in between makes
it read the product again), so running it again changes nothing twice.
"""

import argparse
import json
import os
import sys
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from boto3.dynamodb.conditions import Attr

from shopfeed.commerce import items, keys
from shopfeed.commerce.inventory.stock import move_into_buckets
from shopfeed.platform import clients, dynamo
from shopfeed.platform.errors import Contention
from shopfeed.platform.search.rebuild import Pace
from shopfeed.platform.types import Money

_ATTRIBUTES = (
    "PK",
    "SK",
    "entity_type",
    "order_id",
    "placed_at",
    "product_id",
    "price",
    items.LEGACY_AVAILABLE,
    keys.CATALOG_INDEX.partition_key,
)
# A product whose number changed while the backfill moved it is read again, this many times.
_STOCK_ATTEMPTS = 5


@dataclass
class BackfillReport:
    orders: int = 0  # order headers given their OrdersByAge keys
    products: int = 0  # products given their Catalog keys
    skipped: int = 0  # found without keys, but keyed (or gone) by the time of the update
    stocked: int = 0  # products whose stock number moved into buckets

    @property
    def counts(self) -> dict[str, int]:
        return {"orders": self.orders, "products": self.products, "skipped": self.skipped, "stocked": self.stocked}


def backfill(table: dynamo.Table, pace: Pace, page_size: int = 100) -> BackfillReport:
    """Key every order header and product that lacks its index keys, ``pace`` items a second at most."""
    age, catalog = keys.ORDERS_BY_AGE, keys.CATALOG_INDEX
    product = Attr("entity_type").eq(items.PRODUCT)
    unkeyed = (
        (Attr("entity_type").eq(items.ORDER) & Attr(age.partition_key).not_exists())
        | (product & Attr(catalog.partition_key).not_exists())
        | (product & Attr(items.LEGACY_AVAILABLE).exists())
    )
    report = BackfillReport()
    for page in table.scan_pages(unkeyed, _ATTRIBUTES, page_size):
        for item in page:
            if item["entity_type"] == items.PRODUCT and items.LEGACY_AVAILABLE in item:
                report.stocked += _stock_into_buckets(table, item)
                if catalog.partition_key in item:
                    continue
            if item["entity_type"] == items.ORDER:
                index, index_keys = age, keys.order_by_age(item["placed_at"], item["order_id"])
            else:
                index, index_keys = catalog, keys.product_in_catalog(item["product_id"])
            key = {dynamo.PARTITION: item[dynamo.PARTITION], dynamo.SORT: item[dynamo.SORT]}
            missing = Attr(dynamo.PARTITION).exists() & Attr(index.partition_key).not_exists()
            try:
                table.update(key, dynamo.Update(set=index_keys), missing)
            except dynamo.ConditionFailed:
                report.skipped += 1
                continue
            if item["entity_type"] == items.ORDER:
                report.orders += 1
            else:
                report.products += 1
        pace.after(page_size)  # items read, matched or not
    return report


def _stock_into_buckets(table: dynamo.Table, item: dynamo.Item) -> int:
    """1 when this run moved the product's number into buckets, 0 when it had moved already."""
    product_id = str(item["product_id"])
    for _ in range(_STOCK_ATTEMPTS):
        price = Money.model_validate(item["price"])
        if move_into_buckets(table, product_id, int(item[items.LEGACY_AVAILABLE]), price):
            return 1
        current = table.get(keys.product(product_id))
        if current is None or items.LEGACY_AVAILABLE not in current:
            return 0  # gone, or moved by another run
        item = current
    raise Contention(f"stock of product {product_id}")


def _local_table(stack: str) -> str:
    """Point this process at a running `make dev` stack; the name of its CommerceTable."""
    with urllib.request.urlopen(f"{stack}/__local/stack", timeout=5) as answer:
        page = json.load(answer)
    os.environ.update(page["environment"])
    # The stack's fixed dummy credentials (local/engines.py); botocore reads AWS_DEFAULT_REGION.
    os.environ.update({"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"})
    os.environ.update({"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"})
    os.environ.pop("AWS_SESSION_TOKEN", None)
    return str(page["resources"]["CommerceTable"]["name"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Give old orders and products their archive and snapshot index keys, old products stock buckets."
    )
    parser.add_argument("--stack", help="a running local stack (http://127.0.0.1:3000): its table")
    parser.add_argument("--table", default=os.environ.get("COMMERCE_TABLE_NAME"), help="CommerceTable's name")
    parser.add_argument("--rate", type=float, default=200, help="items per second at most (default 200)")
    args = parser.parse_args(argv)
    table = _local_table(args.stack) if args.stack else args.table
    if not table:
        parser.error("give --table (or --stack)")
    report = backfill(dynamo.Table(clients.dynamodb(), table), Pace(args.rate))
    print(
        f"{table}: {report.orders} orders and {report.products} products keyed, {report.skipped} skipped, "
        f"{report.stocked} products' stock moved into buckets"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
