"""The analytics export under the local stack: an order's events reach the stack's S3 through the
template's rule and delivery stream, under events/type=<type>/day=<day of the event>/ (local/firehose.py)."""

import gzip
import json
import time
from typing import Any

import pytest

from tests.e2e.conftest import EVENT_TIMEOUT_S, Client, LocalStack
from tests.e2e.test_orders import order_body, place

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


def exported(local_stack: LocalStack, event_type: str, day: str, order_id: str) -> list[dict[str, Any]]:
    """The exported events of one order under one type's and day's prefix, once some arrived (or
    the timeout passed)."""
    s3 = local_stack.aws("s3")
    bucket = local_stack.page()["resources"]["AnalyticsBucket"]["name"]
    prefix = f"events/type={event_type}/day={day}/"
    deadline = time.monotonic() + EVENT_TIMEOUT_S
    while True:
        found = []
        for listed in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", []):
            body = gzip.decompress(s3.get_object(Bucket=bucket, Key=listed["Key"])["Body"].read())
            events = [json.loads(line) for line in body.decode().splitlines()]
            found += [e for e in events if e["detail"]["data"].get("order_id") == order_id]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def test_an_orders_events_land_in_the_export_bucket_by_type_and_day(
    local_stack: LocalStack, customer: Client, product: dict[str, Any]
) -> None:
    # given an order placed, then cancelled
    order = place(customer, order_body(product, 1)).json()
    cancelled = customer.post(f"/orders/{order['order_id']}/cancel")
    assert cancelled.status_code == 200, cancelled.text

    # then each of its events is in the stack's S3 under its type and the day it happened
    placed = exported(local_stack, "OrderPlaced", order["placed_at"][:10], order["order_id"])
    assert [e["source"] for e in placed] == ["shopfeed.commerce"]
    assert placed[0]["detail"]["data"]["total"] == order["total"]
    assert placed[0]["time"][:10] == order["placed_at"][:10]
    updated_at = cancelled.json()["updated_at"]
    (gone,) = exported(local_stack, "OrderCancelled", updated_at[:10], order["order_id"])
    assert gone["detail"]["metadata"]["event_type"] == "OrderCancelled"
