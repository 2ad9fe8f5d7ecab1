"""The order archive and the inventory snapshot under the local stack: schedules run on demand
(``POST /__local/schedules/<LogicalId>``), objects land in the stack's S3, snapshots are read over HTTP."""

import json
import subprocess
import sys
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from local.cfn import ROOT
from shopfeed.commerce import keys
from shopfeed.platform.clock import utc_now
from tests.e2e.conftest import Client, LocalStack
from tests.support.archive import Bucket, days_ago, old_orders, seed

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


def run_schedule(anonymous: Client, function: str) -> dict[str, Any]:
    answer = anonymous.post(f"/__local/schedules/{function}")
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()["result"]
    return result


def test_the_archive_schedule_moves_old_orders_to_the_stacks_s3_and_the_api_forgets_them(
    local_stack: LocalStack, anonymous: Client
) -> None:
    # given a customer with 150 orders placed 100 to 130 days ago (seeded below the API: it stamps
    # orders with the current time) and one placed now
    user = f"U-E2E-{uuid.uuid4().hex[:8]}"
    customer = Client(local_stack, local_stack.token(user))
    assert customer.post("/users", json={"email": f"{user.lower()}@example.com", "name": "Archived"}).status_code == 201
    old = old_orders(150, days_ago(130), timedelta(minutes=288), user_id=user)
    seed(local_stack.dynamodb(), "CommerceTable", old)
    assert customer.get(f"/orders/{old[0].order_id}").status_code == 200
    resources = local_stack.page()["resources"]
    bucket = Bucket(local_stack.aws("s3"), resources["ArchiveBucket"]["name"])

    # when the archiver's schedule fires
    result = run_schedule(anonymous, "OrderArchiverFunction")

    # then the old orders are in the stack's bucket exactly once, under their months
    assert result["outcome"] == "done"
    counts = bucket.header_counts()
    assert {order.order_id: counts[order.order_id] for order in old} == {order.order_id: 1 for order in old}
    months = {order.placed_at[:7] for order in old}
    assert {key.split("/")[1] for key in bucket.object_keys()} >= {f"month={month}" for month in months}

    # and the API answers 404 for them, lists none of them, and a new order is untouched
    assert customer.get(f"/orders/{old[0].order_id}").status_code == 404
    assert customer.get(f"/orders/{old[0].order_id}/lines").status_code == 404
    assert customer.get("/users/me/orders").json()["items"] == []

    # and running it again finds nothing more to do
    again = run_schedule(anonymous, "OrderArchiverFunction")
    assert (again["outcome"], again["orders"]) == ("done", 0)
    assert Counter(bucket.header_counts()) == counts


def test_the_snapshot_schedule_takes_the_days_levels_which_ops_read_over_http(
    anonymous: Client, ops: Client, customer: Client, product: dict[str, Any]
) -> None:
    # given a product of stock 10 of which an order took 3
    line = {"product_id": product["product_id"], "quantity": 3, "unit_price": product["price"]}
    placed = customer.post("/orders", json={"lines": [line]}, headers={"Idempotency-Key": str(uuid.uuid4())})
    assert placed.status_code == 201, placed.text

    # when the snapshot's schedule fires (and once more, as a retry would)
    first = run_schedule(anonymous, "InventorySnapshotFunction")
    second = run_schedule(anonymous, "InventorySnapshotFunction")

    # then ops read the day's level of the product, once, paging by product id
    day = utc_now().strftime("%Y-%m-%d")
    assert first["day"] == second["day"] == day
    assert first["products"] == second["products"] >= 1
    levels = _all_levels(ops, day)
    assert [level["available"] for level in levels if level["product_id"] == product["product_id"]] == [7]
    assert [level["product_id"] for level in levels] == sorted({level["product_id"] for level in levels})

    # and a customer may not
    assert customer.get("/inventory/snapshots", params={"date": day}).status_code == 403


def _all_levels(ops: Client, day: str) -> list[dict[str, Any]]:
    levels, cursor = [], None
    for _ in range(100):
        page = ops.get("/inventory/snapshots", params={"date": day, "limit": 2, "cursor": cursor}).json()
        levels += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return levels
    raise AssertionError("still paging after 100 pages")


def test_old_orders_seeded_for_a_try_are_archived_and_shown_by_the_bucket_page(
    local_stack: LocalStack, anonymous: Client
) -> None:
    # given old orders of a user of their own, written by the walkthrough's tool
    user = f"U-E2E-{uuid.uuid4().hex[:8]}"
    command = [sys.executable, "-m", "local.old_orders", "--stack", local_stack.url, "--count", "3", "--user", user]
    printed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    newest = printed.split("newest ")[1].strip()

    # when the archive runs
    assert run_schedule(anonymous, "OrderArchiverFunction")["orders"] >= 3

    # then the bucket page lists an object of the order's month, whose bytes hold the order's header
    month = old_orders_month(printed)
    listed = anonymous.get("/__local/buckets/ArchiveBucket", params={"prefix": f"orders/month={month}/"}).json()
    bodies = [anonymous.get(f"/__local/buckets/ArchiveBucket/{o['key']}").text for o in listed["objects"]]
    partition = [json.loads(line) for body in bodies for line in body.splitlines() if newest in line]
    assert [line["SK"] for line in partition] == [keys.order_line(newest, 1)["SK"], keys.META]
    assert Client(local_stack, local_stack.token(user)).get(f"/orders/{newest}").status_code == 404


def old_orders_month(printed: str) -> str:
    """The month of the newest order the tool printed (``placed <oldest> .. <newest>; newest <id>``)."""
    return printed.split(" .. ")[1][:7]


def test_the_stack_page_lists_the_bucket_and_both_schedules(local_stack: LocalStack) -> None:
    page = local_stack.page()
    assert page["resources"]["ArchiveBucket"]["type"] == "AWS::S3::Bucket"
    assert {s["function"] for s in page["schedules"]} >= {"OrderArchiverFunction", "InventorySnapshotFunction"}
