"""GET /orders?status=&month= (ECOM-005, ops) against moto.

Status partitions are write-sharded (keys.ORDER_STATUS_SHARDS); a page costs one Query per shard
that may still hold orders: exactly ORDER_STATUS_SHARDS on a first page, at most that afterwards.
"""

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, line, money, placed_order, seed_order
from shopfeed.commerce import bootstrap, keys
from shopfeed.commerce.models import Order, OrderStatus
from tests.support.calls import dynamodb_calls

OCTOBER = datetime(2026, 10, 1, tzinfo=UTC)
NOVEMBER = datetime(2026, 11, 1, tzinfo=UTC)
# Runs of the same shard and shards that fall silent early make the merge do real work.
OCTOBER_SHARDS = [0, 0, 0, 1, 2, 3, 3, 1, 0, 2, 2, 2, 1, 3, *range(4, keys.ORDER_STATUS_SHARDS), 15, 9]
NOVEMBER_SHARDS = [3, 1, 1]
MAX_PAGES = 50


def seed_month(start: datetime, shards: list[int], user_id: str = "U100") -> list[Order]:
    """Placed orders one hour apart from ``start``, the n-th in write shard ``shards[n]``."""
    store = bootstrap.repository()
    return [seed_order(store, user_id, start + timedelta(hours=hour), shard=shard) for hour, shard in enumerate(shards)]


@pytest.fixture
def history(admin: ApiClient) -> dict[str, list[Order]]:
    """Placed orders of two months spread over every shard, and a shipped one."""
    create_product(admin, "P-RED-TSHIRT", available=1000)
    seed_order(bootstrap.repository(), "U300", OCTOBER + timedelta(days=3), shard=0, status=OrderStatus.SHIPPED)
    return {"2026-10": seed_month(OCTOBER, OCTOBER_SHARDS), "2026-11": seed_month(NOVEMBER, NOVEMBER_SHARDS, "U200")}


@pytest.fixture
def some_orders(admin: ApiClient) -> list[Order]:
    """Three placed orders and a shipped one in October: enough for a second page."""
    create_product(admin, "P-RED-TSHIRT", available=1000)
    seed_order(bootstrap.repository(), "U300", OCTOBER + timedelta(days=3), shard=0, status=OrderStatus.SHIPPED)
    return seed_month(OCTOBER, [0, 1, 2])


def newest_first(orders: list[Order]) -> list[str]:
    return [order.order_id for order in sorted(orders, key=lambda o: o.placed_at, reverse=True)]


def ids(page: dict[str, Any]) -> list[str]:
    return [order["order_id"] for order in page["items"]]


def walk(ops: ApiClient, month: str, limit: int) -> tuple[list[dict[str, Any]], list[Counter[str]]]:
    """Every page of the month's placed orders, and the DynamoDB calls of each page."""
    answers, calls_per_page = [], []
    cursor = None
    for _ in range(MAX_PAGES):
        with dynamodb_calls() as calls:
            answer = ops.get("/orders", query={"status": "Placed", "month": month, "limit": limit, "cursor": cursor})
        assert answer.status == 200, answer.text
        answers.append(answer.json)
        calls_per_page.append(calls.counts())
        cursor = answer.json["next_cursor"]
        if cursor is None:
            return answers, calls_per_page
    raise AssertionError(f"still a next_cursor after {MAX_PAGES} pages")


@pytest.mark.parametrize("limit", [1, 4])
def test_list_by_status_merges_shards_newest_first_across_pages(
    ops: ApiClient, history: dict[str, list[Order]], limit: int
) -> None:
    # given
    october = history["2026-10"]
    assert {keys.order_status_shard(o.order_id) for o in october} == set(range(keys.ORDER_STATUS_SHARDS))

    # when
    answers, calls_per_page = walk(ops, "2026-10", limit)

    # then: every order once, globally newest first, full pages but the last, and no empty page
    listed = [order_id for page in answers for order_id in ids(page)]
    assert listed == newest_first(october)
    sizes = [len(page["items"]) for page in answers]
    assert sizes[:-1] == [limit] * (len(sizes) - 1)
    assert 0 < sizes[-1] <= limit
    # one Query per shard on the first page; later pages skip shards already exhausted
    assert calls_per_page[0] == {"Query": keys.ORDER_STATUS_SHARDS}
    assert all(set(c) == {"Query"} and c["Query"] <= keys.ORDER_STATUS_SHARDS for c in calls_per_page)


def test_list_by_status_answers_a_whole_month_on_one_page_when_it_fits(
    ops: ApiClient, history: dict[str, list[Order]]
) -> None:
    # when
    with dynamodb_calls() as calls:
        answer = ops.get("/orders", query={"status": "Placed", "month": "2026-11"})

    # then
    assert ids(answer.json) == newest_first(history["2026-11"])
    assert answer.json["next_cursor"] is None
    assert calls.counts() == {"Query": keys.ORDER_STATUS_SHARDS}
    newest = history["2026-11"][-1]
    assert answer.json["items"][0] == {
        "order_id": newest.order_id,
        "user_id": "U200",
        "status": "Placed",
        "placed_at": newest.placed_at,
        "updated_at": newest.placed_at,
        "total": money(),
        "line_count": 1,
    }


@pytest.mark.usefixtures("some_orders")
def test_list_by_status_lists_only_the_asked_status(ops: ApiClient) -> None:
    # when
    answer = ops.get("/orders", query={"status": "Shipped", "month": "2026-10"})

    # then
    assert [(o["user_id"], o["status"]) for o in answer.json["items"]] == [("U300", "Shipped")]


def test_list_by_status_of_a_month_without_orders_is_one_empty_last_page(ops: ApiClient) -> None:
    # when
    with dynamodb_calls() as calls:
        answer = ops.get("/orders", query={"status": "Placed", "month": "2020-01"})

    # then
    assert answer.json == {"items": [], "next_cursor": None}
    assert calls.counts() == {"Query": keys.ORDER_STATUS_SHARDS}


def test_list_by_status_defaults_to_the_current_month(
    commerce_api: ApiClient, admin: ApiClient, ops: ApiClient
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT")
    placed = placed_order(commerce_api, line("P-RED-TSHIRT", 1))

    # when
    answer = ops.get("/orders", query={"status": "Placed"})

    # then
    assert ids(answer.json) == [placed["order_id"]]


def test_cancelled_order_moves_from_the_placed_to_the_cancelled_listing(
    commerce_api: ApiClient, admin: ApiClient, ops: ApiClient
) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT")
    placed = placed_order(commerce_api, line("P-RED-TSHIRT", 1))
    month = placed["placed_at"][:7]

    # when
    commerce_api.post(f"/orders/{placed['order_id']}/cancel")

    # then
    assert ops.get("/orders", query={"status": "Placed", "month": month}).json["items"] == []
    cancelled = ops.get("/orders", query={"status": "Cancelled", "month": month}).json["items"]
    assert [(o["order_id"], o["status"]) for o in cancelled] == [(placed["order_id"], "Cancelled")]


@pytest.mark.usefixtures("some_orders")
@pytest.mark.parametrize(
    "other_query",
    [
        pytest.param({"status": "Placed", "month": "2026-11"}, id="another month"),
        pytest.param({"status": "Cancelled", "month": "2026-10"}, id="another status"),
    ],
)
def test_list_by_status_refuses_a_cursor_from_another_query(ops: ApiClient, other_query: dict[str, str]) -> None:
    # given
    cursor = ops.get("/orders", query={"status": "Placed", "month": "2026-10", "limit": 2}).json["next_cursor"]

    # when
    answer = ops.get("/orders", query={**other_query, "cursor": cursor})

    # then
    assert answer.status == 400
    assert answer.json["type"].endswith("/invalid-cursor")


@pytest.mark.usefixtures("some_orders")
def test_list_by_status_refuses_an_edited_cursor(ops: ApiClient) -> None:
    # given
    cursor = ops.get("/orders", query={"status": "Placed", "month": "2026-10", "limit": 2}).json["next_cursor"]

    # when
    answer = ops.get("/orders", query={"status": "Placed", "month": "2026-10", "cursor": "x" + cursor[1:]})

    # then
    assert answer.status == 400


@pytest.mark.parametrize("caller", [("U100",), ("U-ADMIN", "admin")], ids=["plain user", "admin"])
def test_list_by_status_is_refused_to_anyone_but_ops(commerce_api: ApiClient, caller: tuple[str, ...]) -> None:
    # when
    answer = commerce_api.as_user(*caller).get("/orders", query={"status": "Placed", "month": "2026-10"})

    # then
    assert answer.status == 403
    assert answer.content_type == "application/problem+json"


@pytest.mark.parametrize(
    ("query", "location"),
    [
        pytest.param({"month": "2026-10"}, ["query", "status"], id="no status"),
        pytest.param({"status": "Lost", "month": "2026-10"}, ["query", "status"], id="unknown status"),
        pytest.param({"status": "Placed", "month": "2026-13"}, ["query", "month"], id="no such month"),
        pytest.param({"status": "Placed", "limit": 201}, ["query", "limit"], id="page too large"),
    ],
)
def test_list_by_status_rejects_a_malformed_query_with_its_location(
    ops: ApiClient, query: dict[str, Any], location: list[str]
) -> None:
    # when
    answer = ops.get("/orders", query=query)

    # then
    assert answer.status == 422
    assert [error["loc"] for error in answer.json["errors"]] == [location]
