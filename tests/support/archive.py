"""The order archive in tests: old orders seeded below the API, the bucket read back, runs invoked with
a Lambda context, and crashes injected where a run can die."""

import json
import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from local import cfn
from shopfeed.commerce import items, keys
from shopfeed.commerce.models import Order, OrderLine, OrderStatus
from shopfeed.platform import batch_writes, dynamo
from shopfeed.platform.clock import iso, new_id
from shopfeed.platform.types import Money

ARCHIVER = "OrderArchiverFunction"
SNAPSHOT = "InventorySnapshotFunction"


@dataclass
class ScheduledContext:
    """Lambda's context for a scheduled run: ``remaining_ms`` is asked each time (a callable may count down)."""

    function_name: str = ARCHIVER
    remaining_ms: int | Callable[[], int] = 900_000
    memory_limit_in_mb: int = 1024
    aws_request_id: str = "scheduled-run"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms() if callable(self.remaining_ms) else self.remaining_ms


# -- orders placed long ago -------------------------------------------------------------------------


def old_orders(
    count: int,
    first_placed: datetime,
    step: timedelta,
    *,
    lines: int = 1,
    user_id: str = "U-ARCHIVE",
    status: OrderStatus = OrderStatus.DELIVERED,
) -> list[Order]:
    """``count`` orders placed ``step`` apart from ``first_placed``, ``lines`` lines each, done with
    (``status``: an unpaid order is never archived)."""
    orders = []
    for n in range(count):
        moment = first_placed + n * step
        order_lines = tuple(
            OrderLine(
                line_no=line_no,
                product_id=f"P-ITEM-{line_no:02d}",
                quantity=1 + n % 3,
                unit_price=Money(amount=1999, currency="EUR"),
            )
            for line_no in range(1, lines + 1)
        )
        orders.append(
            Order(
                order_id=new_id(moment),
                user_id=user_id,
                status=status,
                placed_at=iso(moment),
                updated_at=iso(moment),
                total=Money(amount=sum(line.line_total.amount for line in order_lines), currency="EUR"),
                line_count=lines,
                version=1,
                lines=order_lines,
            )
        )
    return orders


def days_ago(days: float) -> datetime:
    return datetime.now(UTC) - timedelta(days=days)


def order_items(order: Order) -> list[dynamo.Item]:
    """The items the place-order transaction writes to the order's partition (stock and outbox aside)."""
    return [items.order_item(order), *(items.order_line_item(order, line) for line in order.lines)]


def seed(client: Any, table: str, orders: Sequence[Order], extra: Sequence[dynamo.Item] = ()) -> None:
    """Write the orders' items as the API would have (BatchWriteItem: a thousand orders in seconds)."""
    written = [item for order in orders for item in order_items(order)] + list(extra)
    requests: list[Any] = [{"PutRequest": {"Item": dynamo.serialize(item)}} for item in written]
    batch_writes.write_all(client, table, requests)


def hot_order_items(client: Any, table: str) -> list[dynamo.Item]:
    """Every item left in order partitions (a Scan: tests only)."""
    pages = client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True)
    found = [dynamo.deserialize(item) for page in pages for item in page["Items"]]
    return [item for item in found if str(item["PK"]).startswith(keys.ORDER)]


def archive_partition_items(client: Any, table: str) -> list[dynamo.Item]:
    """The job's own items (manifests, lease)."""
    response = client.query(
        TableName=table,
        KeyConditionExpression="PK = :archive",
        ExpressionAttributeValues={":archive": {"S": keys.ARCHIVE}},
        ConsistentRead=True,
    )
    return [dynamo.deserialize(item) for item in response["Items"]]


# -- the bucket -------------------------------------------------------------------------------------


def create_archive_bucket(s3: Any, name: str) -> None:
    """The template's archive bucket (versioning as declared) in the S3 the client points at."""
    props = cfn.load()["Resources"]["ArchiveBucket"]["Properties"]
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration=props["VersioningConfiguration"])


@dataclass
class Bucket:
    """What the archive bucket holds now (each object's current version)."""

    s3: Any
    name: str

    def object_keys(self) -> list[str]:
        pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.name)
        return sorted(obj["Key"] for page in pages for obj in page.get("Contents", []))

    def lines(self, key: str) -> list[dict[str, Any]]:
        body = self.s3.get_object(Bucket=self.name, Key=key)["Body"].read().decode()
        return [json.loads(line) for line in body.splitlines() if line]

    def items(self) -> list[dict[str, Any]]:
        return [line for key in self.object_keys() for line in self.lines(key)]

    def header_counts(self) -> Counter[str]:
        """How many times each order's header appears across every object (1 each: exactly once)."""
        return Counter(item["order_id"] for item in self.items() if item["entity_type"] == items.ORDER)

    def versions(self, key: str) -> list[dict[str, Any]]:
        return list(self.s3.list_object_versions(Bucket=self.name, Prefix=key).get("Versions", []))


# -- dying mid-run ----------------------------------------------------------------------------------


class Crash(BaseException):
    """The process died here. A BaseException: no ``except Exception`` in the code under test sees it,
    as none would see a SIGKILL."""


@contextmanager
def crash_at(
    client: Any, event: str, nth: int = 1, when: Callable[[dict[str, Any]], bool] | None = None
) -> Iterator[list[int]]:
    """Die the ``nth`` time a client emits ``event``: ``before-parameter-build.dynamodb.DeleteItem``
    before the request is made, when its parameters match ``when``; ``before-call...`` before it is sent;
    ``after-call.s3.PutObject`` after S3 answered."""
    seen = [0]

    def die(params: dict[str, Any] | None = None, **_: Any) -> None:
        if when is not None and (params is None or not when(params)):
            return
        seen[0] += 1
        if seen[0] == nth:
            raise Crash(f"{event} #{nth}")

    client.meta.events.register(event, die)
    try:
        yield seen
    finally:
        client.meta.events.unregister(event, die)


def deleting(prefix: str) -> Callable[[dict[str, Any]], bool]:
    """A DeleteItem of an item whose partition key starts with ``prefix``."""
    return lambda params: str(params["Key"]["PK"]["S"]).startswith(prefix)


def forgetting_a_batch(params: dict[str, Any]) -> bool:
    return str(params["Key"]["SK"]["S"]).startswith(keys.ARCHIVE_BATCH)


@dataclass(frozen=True)
class CrashPoint:
    """Where a run dies, relative to the second batch (the first is done by then): the client, the
    botocore event, which occurrence, given the first batch's order count (one line each)."""

    name: str
    service: str
    event: str
    nth: Callable[[int], int]
    when: Callable[[dict[str, Any]], bool] | None = None

    def __str__(self) -> str:
        return self.name


CRASH_POINTS = (
    CrashPoint("recorded, before its object", "s3", "before-call.s3.PutObject", lambda first: 2),
    CrashPoint("object written, before the manifest says so", "s3", "after-call.s3.PutObject", lambda first: 2),
    CrashPoint(
        "object confirmed, as the manifest is marked", "dynamodb", "before-call.dynamodb.UpdateItem", lambda first: 2
    ),
    CrashPoint("written, before any delete", "dynamodb", "after-call.dynamodb.UpdateItem", lambda first: 2),
    CrashPoint(
        "amid the header deletes",
        "dynamodb",
        "before-parameter-build.dynamodb.DeleteItem",
        lambda first: first + 10,
        deleting(keys.ORDER),
    ),
    CrashPoint(
        "amid the line deletes",
        "dynamodb",
        "before-call.dynamodb.BatchWriteItem",
        lambda first: math.ceil(first / batch_writes.MAX_BATCH) + 2,
    ),
    CrashPoint(
        "before the manifest is forgotten",
        "dynamodb",
        "before-parameter-build.dynamodb.DeleteItem",
        lambda first: 2,
        forgetting_a_batch,
    ),
)
