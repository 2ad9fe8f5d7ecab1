"""Bring an archived order back into CommerceTable (a dispute, a late return): ``make restore ORDER=<id>``
locally, or an operator in AWS::

    python -m shopfeed.commerce.archive.restore --order-id 01HV... \\
        --table shopfeed-prod-CommerceTable-XXXX --bucket shopfeed-prod-archivebucket-XXXX

1. The order's object is found: an order id is a ULID of its placement time, so its month is known,
   and that month's objects are read until one holds the order.
2. An object whose batch is unfinished is left alone: the next archive run finishes it first.
3. The order's items are put back, each only if absent (a live item is never overwritten). Its age
   counts from the restore (its OrdersByAge key), so it stays hot another ArchiveAfterDays.
4. The object is written again without the order (versioning keeps the earlier version): once the
   order is archived again, S3 holds it once.

A restore cut short is finished by running it again: the order is still in its object, the items
already back are left as they are, and the object is written without it.
"""

import argparse
import json
import os
import sys
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ulid import ULID

from shopfeed.commerce import keys
from shopfeed.commerce.archive.archiver import CONTENT_TYPE, OBJECT_PREFIX, decode, encode
from shopfeed.commerce.archive.repository import ArchiveRepository
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import iso, utc_now
from shopfeed.platform.objects import S3Objects


class OrderNotArchived(Exception):
    def __init__(self, order_id: str, month: str) -> None:
        super().__init__(f"order {order_id} is in no object of {month}")


class BatchUnfinished(Exception):
    def __init__(self, object_key: str) -> None:
        super().__init__(f"{object_key} belongs to an unfinished batch: run the archiver first")


@dataclass(frozen=True)
class Restored:
    order_id: str
    object_key: str
    put_back: int  # items written to the table by this call
    already_back: int  # items a cut-short restore had written


def month_of(order_id: str) -> str:
    """The month an order was placed: its id is a ULID of its placement time."""
    return ULID.from_str(order_id).datetime.strftime("%Y-%m")


def restore(order_id: str, store: ArchiveRepository, objects: S3Objects, now: datetime) -> Restored:
    """Put ``order_id`` back in the table and take it out of its archive object."""
    month = month_of(order_id)
    unfinished = {batch.object_key for batch in store.unfinished_batches()}
    for key in objects.keys(f"{OBJECT_PREFIX}month={month}/"):
        body = objects.get(key)
        if order_id.encode() not in body:
            continue  # cheaper than parsing every object of the month
        orders = decode(body)
        if order_id not in orders:
            continue
        if key in unfinished:
            raise BatchUnfinished(key)
        age = keys.ORDERS_BY_AGE
        restarted = keys.order_by_age(iso(now), order_id)
        partition = [item | restarted if age.partition_key in item else item for item in orders.pop(order_id)]
        put_back = store.put_back(partition)
        metadata = {
            "batch-id": key.rsplit("/", 1)[-1].removesuffix(".jsonl"),
            "month": month,
            "orders": str(len(orders)),
        }
        objects.put(key, encode(orders), CONTENT_TYPE, metadata)
        return Restored(order_id, key, put_back, len(partition) - put_back)
    raise OrderNotArchived(order_id, month)


def _local_stack(stack: str) -> tuple[str, str]:
    """Point this process at a running `make dev` stack; its table and bucket names."""
    with urllib.request.urlopen(f"{stack}/__local/stack", timeout=5) as answer:
        page = json.load(answer)
    os.environ.update(page["environment"])
    # The stack's fixed dummy credentials (local/engines.py); botocore reads AWS_DEFAULT_REGION.
    os.environ.update({"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"})
    os.environ.update({"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"})
    os.environ.pop("AWS_SESSION_TOKEN", None)
    resources = page["resources"]
    return str(resources["CommerceTable"]["name"]), str(resources["ArchiveBucket"]["name"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Bring an archived order back into CommerceTable.")
    parser.add_argument("--order-id", required=True)
    parser.add_argument("--stack", help="a running local stack (http://127.0.0.1:3000): its table and bucket")
    parser.add_argument("--table", default=os.environ.get("COMMERCE_TABLE_NAME"), help="CommerceTable's name")
    parser.add_argument("--bucket", default=os.environ.get("ARCHIVE_BUCKET_NAME"), help="the archive bucket")
    args = parser.parse_args(argv)
    table, bucket = _local_stack(args.stack) if args.stack else (args.table, args.bucket)
    if not table or not bucket:
        parser.error("give --table and --bucket (or --stack)")
    store = ArchiveRepository(dynamo.Table(clients.dynamodb(), table))
    try:
        restored = restore(args.order_id, store, S3Objects(clients.s3(), bucket), utc_now())
    except (OrderNotArchived, BatchUnfinished) as error:
        print(error, file=sys.stderr)
        return 1
    print(
        f"order {restored.order_id}: {restored.put_back} items put back ({restored.already_back} were already), "
        f"taken out of {restored.object_key}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
