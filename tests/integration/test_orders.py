"""Orders against moto: place (ECOM-009), get (ECOM-003), lines (ECOM-004), mine (ECOM-002), cancel."""

from datetime import UTC, datetime
from typing import Any

import pytest

from local.harness.client import ApiClient
from local.harness.factories import (
    SteppingClock,
    create_product,
    create_products,
    line,
    money,
    order_body,
    pages,
    place_order,
    placed_order,
    seed_order,
)
from local.harness.tables import table_items
from shopfeed.commerce import bootstrap, events, items
from shopfeed.commerce.models import MAX_ORDER_LINES, OrderStatus
from shopfeed.commerce.orders import services
from shopfeed.platform.idempotency import ENTITY_TYPE as IDEMPOTENCY_KEY
from tests.support.calls import dynamodb_calls


def entities(entity_type: str) -> list[dict[str, Any]]:
    return [item for item in table_items() if item["entity_type"] == entity_type]


def outbox_events(event_type: str) -> list[dict[str, Any]]:
    return [event for event in entities(items.OUTBOX_EVENT) if event["event_type"] == event_type]


def stock(client: ApiClient, product_id: str) -> int:
    return int(client.get(f"/products/{product_id}").json["available"])


@pytest.fixture
def catalog(admin: ApiClient) -> None:
    create_product(admin, "P-RED-TSHIRT", price=1999, available=10)
    create_product(admin, "P-BLUE-MUG", category="mugs", price=899, available=5)
    create_product(admin, "P-GREEN-CAP", category="caps", price=1250, available=3)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SteppingClock:
    """Orders placed one second apart, so newest-first is a known order."""
    clock = SteppingClock(datetime(2026, 3, 1, 12, tzinfo=UTC))
    monkeypatch.setattr(services, "utc_now", clock)
    return clock


# -- POST /orders (ECOM-009) ------------------------------------------------------------------------


@pytest.mark.usefixtures("catalog")
def test_place_order_writes_order_stock_event_and_key_in_one_transaction(commerce_api: ApiClient) -> None:
    # given a container that keeps the products' stock layouts (its first order read them: decision 154)
    bootstrap.repository().stock.recent_layouts(["P-RED-TSHIRT", "P-BLUE-MUG"])

    # when
    with dynamodb_calls() as calls:
        answer = place_order(commerce_api, line("P-RED-TSHIRT", 2, 1999), line("P-BLUE-MUG", 1, 899))

    # then
    assert calls.operations == ["TransactWriteItems"]
    assert answer.status == 201
    order = answer.json
    assert answer.headers["Location"] == f"/orders/{order['order_id']}"
    assert "Idempotent-Replayed" not in answer.headers
    assert order == {
        "order_id": order["order_id"],
        "user_id": "U100",
        "status": "Placed",
        "placed_at": order["placed_at"],
        "updated_at": order["placed_at"],
        "total": money(2 * 1999 + 899),
        "lines": [
            {
                "line_no": 1,
                "product_id": "P-RED-TSHIRT",
                "quantity": 2,
                "unit_price": money(1999),
                "line_total": money(3998),
            },
            {
                "line_no": 2,
                "product_id": "P-BLUE-MUG",
                "quantity": 1,
                "unit_price": money(899),
                "line_total": money(899),
            },
        ],
    }
    assert (stock(commerce_api, "P-RED-TSHIRT"), stock(commerce_api, "P-BLUE-MUG")) == (8, 4)
    [placed] = outbox_events(events.ORDER_PLACED)
    assert placed["aggregate_id"] == order["order_id"]
    assert len(entities(items.ORDER_LINE)) == 2
    assert len(entities(IDEMPOTENCY_KEY)) == 1


@pytest.mark.usefixtures("catalog")
def test_place_order_replay_answers_the_original_with_one_call_and_orders_once(commerce_api: ApiClient) -> None:
    # given
    first = place_order(commerce_api, line("P-RED-TSHIRT", 2), key="order-0001")

    # when
    with dynamodb_calls() as calls:
        replay = place_order(commerce_api, line("P-RED-TSHIRT", 2), key="order-0001")

    # then
    assert calls.operations == ["TransactWriteItems"]
    assert (replay.status, replay.json) == (201, first.json)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.headers["Location"] == first.headers["Location"]
    assert len(entities(items.ORDER)) == 1
    assert len(outbox_events(events.ORDER_PLACED)) == 1
    assert stock(commerce_api, "P-RED-TSHIRT") == 8


@pytest.mark.usefixtures("catalog")
def test_place_order_replay_answers_the_original_even_after_the_stock_ran_out(commerce_api: ApiClient) -> None:
    # given
    first = place_order(commerce_api, line("P-GREEN-CAP", 3, 1250), key="all-the-caps")

    # when
    replay = place_order(commerce_api, line("P-GREEN-CAP", 3, 1250), key="all-the-caps")

    # then
    assert (replay.status, replay.json) == (201, first.json)
    assert stock(commerce_api, "P-GREEN-CAP") == 0


@pytest.mark.usefixtures("catalog")
def test_place_order_with_a_reused_key_and_another_body_answers_422(commerce_api: ApiClient) -> None:
    # given
    place_order(commerce_api, line("P-RED-TSHIRT", 1), key="order-0001")
    before = table_items()

    # when
    answer = place_order(commerce_api, line("P-RED-TSHIRT", 5), key="order-0001")

    # then
    assert answer.status == 422
    assert answer.json["type"].endswith("/idempotency-key-reused")
    assert table_items() == before


@pytest.mark.usefixtures("catalog")
def test_place_order_scopes_idempotency_keys_per_user(commerce_api: ApiClient) -> None:
    # given
    mine = place_order(commerce_api, line("P-RED-TSHIRT", 1), key="order-0001")

    # when
    theirs = place_order(commerce_api.as_user("U200"), line("P-RED-TSHIRT", 1), key="order-0001")

    # then
    assert theirs.status == 201
    assert "Idempotent-Replayed" not in theirs.headers
    assert theirs.json["order_id"] != mine.json["order_id"]
    assert stock(commerce_api, "P-RED-TSHIRT") == 8


@pytest.mark.usefixtures("catalog")
def test_place_order_without_an_idempotency_key_answers_400_and_writes_nothing(commerce_api: ApiClient) -> None:
    # given
    before = table_items()

    # when
    answer = commerce_api.post("/orders", order_body(line("P-RED-TSHIRT", 1)))

    # then
    assert answer.status == 400
    assert answer.json["type"].endswith("/idempotency-key-missing")
    assert table_items() == before


@pytest.mark.usefixtures("catalog")
def test_place_order_rejects_when_stock_is_short_naming_every_short_product(commerce_api: ApiClient) -> None:
    # given
    before = table_items()

    # when
    answer = place_order(
        commerce_api, line("P-RED-TSHIRT", 2, 1999), line("P-BLUE-MUG", 6, 899), line("P-GREEN-CAP", 4, 1250)
    )

    # then
    assert answer.status == 409
    assert answer.content_type == "application/problem+json"
    assert answer.json["type"].endswith("/insufficient-stock")
    assert answer.json["products"] == [
        {"product_id": "P-BLUE-MUG", "requested": 6, "available": 5},
        {"product_id": "P-GREEN-CAP", "requested": 4, "available": 3},
    ]
    assert table_items() == before  # no order, line, outbox or key item; every stock level unchanged


@pytest.mark.usefixtures("catalog")
def test_place_order_refused_for_short_stock_can_be_retried_with_the_same_key(
    commerce_api: ApiClient, admin: ApiClient
) -> None:
    # given
    refused = place_order(commerce_api, line("P-GREEN-CAP", 5, 1250), key="caps")
    admin.post("/products/P-GREEN-CAP/stock", {"quantity": 2}, headers={"Idempotency-Key": "restock-caps"})

    # when
    retried = place_order(commerce_api, line("P-GREEN-CAP", 5, 1250), key="caps")

    # then
    assert refused.status == 409
    assert retried.status == 201
    assert "Idempotent-Replayed" not in retried.headers
    assert stock(commerce_api, "P-GREEN-CAP") == 0


@pytest.mark.usefixtures("catalog")
def test_place_order_of_unknown_products_answers_404_with_their_ids(commerce_api: ApiClient) -> None:
    # given
    before = table_items()

    # when
    answer = place_order(commerce_api, line("P-NOPE", 1), line("P-RED-TSHIRT", 1), line("P-GHOST", 1))

    # then
    assert answer.status == 404
    assert answer.json["product_ids"] == ["P-NOPE", "P-GHOST"]
    assert table_items() == before


@pytest.mark.usefixtures("catalog")
def test_place_order_rejects_a_quoted_price_that_is_not_the_current_one(commerce_api: ApiClient) -> None:
    # given
    before = table_items()

    # when
    answer = place_order(commerce_api, line("P-RED-TSHIRT", 1, price=1500))

    # then
    assert answer.status == 409
    assert answer.json["type"].endswith("/price-changed")
    assert answer.json["products"] == [
        {"product_id": "P-RED-TSHIRT", "quoted_unit_price": money(1500), "current_unit_price": money(1999)}
    ]
    assert table_items() == before


@pytest.mark.usefixtures("catalog")
@pytest.mark.parametrize(
    "lines",
    [
        pytest.param([line("P-RED-TSHIRT", 1), line("P-RED-TSHIRT", 2)], id="the same product twice"),
        pytest.param([line("P-RED-TSHIRT", 1), line("P-BLUE-MUG", 1, 899, "USD")], id="mixed currencies"),
        pytest.param([line("P-RED-TSHIRT", 1000, 10**12)], id="a total larger than any amount"),
    ],
)
def test_place_order_rejects_lines_that_break_order_rules_with_422(
    commerce_api: ApiClient, lines: list[dict[str, Any]]
) -> None:
    # given
    before = table_items()

    # when
    answer = place_order(commerce_api, *lines)

    # then
    assert answer.status == 422
    assert answer.json["type"].endswith("/invalid-request")
    assert table_items() == before


def test_place_order_bounds_the_line_count_so_the_transaction_fits(commerce_api: ApiClient) -> None:
    # given
    lines = [line(f"P-ITEM-{n:02d}") for n in range(MAX_ORDER_LINES + 1)]

    # when
    answer = place_order(commerce_api, *lines)

    # then
    assert answer.status == 422
    assert [error["loc"] for error in answer.json["errors"]] == [["body", "lines"]]
    assert table_items() == []


def test_place_order_of_the_largest_allowed_order_is_one_transaction(commerce_api: ApiClient, admin: ApiClient) -> None:
    # given
    product_ids = create_products(admin, MAX_ORDER_LINES, available=1)

    # when
    with dynamodb_calls() as calls:
        answer = place_order(commerce_api, *(line(product_id) for product_id in product_ids))

    # then
    assert answer.status == 201
    assert len(answer.json["lines"]) == MAX_ORDER_LINES
    # a container's first order of these products reads their stock layouts first (decision 154)
    assert calls.operations == ["BatchGetItem", "TransactWriteItems"]


@pytest.mark.usefixtures("catalog")
def test_place_order_rejects_malformed_lines_with_field_locations_and_writes_nothing(
    commerce_api: ApiClient,
) -> None:
    # given
    before = table_items()
    body = {
        "lines": [
            {**line("P-RED-TSHIRT"), "quantity": 0},
            {"product_id": "P-BLUE-MUG", "quantity": 1},
            {**line("P-GREEN-CAP"), "discount": 100},
        ]
    }

    # when
    answer = commerce_api.post("/orders", body, headers={"Idempotency-Key": "malformed"})

    # then
    assert answer.status == 422
    assert answer.content_type == "application/problem+json"
    locations = {tuple(error["loc"]) for error in answer.json["errors"]}
    assert locations == {
        ("body", "lines", 0, "quantity"),
        ("body", "lines", 1, "unit_price"),
        ("body", "lines", 2, "discount"),
    }
    assert table_items() == before


def test_place_order_rejects_an_order_without_lines(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.post("/orders", {"lines": []}, headers={"Idempotency-Key": "empty"})

    # then
    assert answer.status == 422
    assert [error["loc"] for error in answer.json["errors"]] == [["body", "lines"]]


# -- GET /orders/{order_id} (ECOM-003) ----------------------------------------------------------------


@pytest.mark.usefixtures("catalog")
def test_get_order_answers_header_and_lines_with_one_query(commerce_api: ApiClient) -> None:
    # given
    placed = placed_order(commerce_api, line("P-RED-TSHIRT", 2, 1999), line("P-BLUE-MUG", 1, 899))

    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.get(f"/orders/{placed['order_id']}")

    # then
    assert calls.operations == ["Query"]
    assert answer.status == 200
    assert answer.json == placed
    assert answer.headers["ETag"] == '"1"'


@pytest.mark.usefixtures("catalog")
def test_get_order_of_another_user_answers_404_like_a_missing_one(commerce_api: ApiClient) -> None:
    # given
    placed = placed_order(commerce_api, line("P-RED-TSHIRT", 1))
    stranger = commerce_api.as_user("U200")

    # when
    answer = stranger.get(f"/orders/{placed['order_id']}")

    # then
    assert answer.status == 404
    assert answer.json["type"].endswith("/not-found")
    assert placed["user_id"] not in answer.text


@pytest.mark.usefixtures("catalog")
def test_get_order_of_another_user_is_allowed_to_ops(commerce_api: ApiClient, ops: ApiClient) -> None:
    # given
    placed = placed_order(commerce_api, line("P-RED-TSHIRT", 1))

    # when
    answer = ops.get(f"/orders/{placed['order_id']}")

    # then
    assert answer.status == 200
    assert answer.json == placed


def test_get_order_answers_404_for_an_unknown_order(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get("/orders/01J00000000000000000000000")

    # then
    assert answer.status == 404


def test_get_order_rejects_an_id_that_is_not_a_ulid(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get("/orders/not-an-order-id")

    # then
    assert answer.status == 422
    assert [error["loc"] for error in answer.json["errors"]] == [["path", "order_id"]]


# -- GET /orders/{order_id}/lines (ECOM-004) -----------------------------------------------------------


@pytest.fixture
def five_line_order(commerce_api: ApiClient, admin: ApiClient) -> dict[str, Any]:
    product_ids = create_products(admin, 5)
    return placed_order(commerce_api, *(line(product_id) for product_id in product_ids))


def test_list_lines_pages_by_line_number_with_one_query_per_page(
    commerce_api: ApiClient, five_line_order: dict[str, Any]
) -> None:
    # given
    path = f"/orders/{five_line_order['order_id']}/lines"

    # when
    with dynamodb_calls() as calls:
        answers = list(pages(commerce_api, path, limit=2))

    # then
    assert [[item["line_no"] for item in page["items"]] for page in answers] == [[1, 2], [3, 4], [5]]
    assert [page["next_cursor"] is None for page in answers] == [False, False, True]
    assert calls.operations == ["Query"] * 3
    assert [item for page in answers for item in page["items"]] == five_line_order["lines"]


def test_list_lines_answers_every_line_on_one_page_by_default(
    commerce_api: ApiClient, five_line_order: dict[str, Any]
) -> None:
    # when
    answer = commerce_api.get(f"/orders/{five_line_order['order_id']}/lines")

    # then
    assert answer.json == {"items": five_line_order["lines"], "next_cursor": None}


def test_list_lines_of_another_users_order_answers_404(
    commerce_api: ApiClient, five_line_order: dict[str, Any]
) -> None:
    # when
    answer = commerce_api.as_user("U200").get(f"/orders/{five_line_order['order_id']}/lines")

    # then
    assert answer.status == 404
    assert "P-ITEM" not in answer.text


def test_list_lines_of_another_users_order_is_allowed_to_ops(ops: ApiClient, five_line_order: dict[str, Any]) -> None:
    # when
    answer = ops.get(f"/orders/{five_line_order['order_id']}/lines")

    # then
    assert answer.status == 200
    assert answer.json["items"] == five_line_order["lines"]


def test_list_lines_refuses_a_cursor_from_another_order(
    commerce_api: ApiClient, admin: ApiClient, five_line_order: dict[str, Any]
) -> None:
    # given
    other = placed_order(commerce_api, line("P-ITEM-01"), line("P-ITEM-02"))
    cursor = commerce_api.get(f"/orders/{other['order_id']}/lines", query={"limit": 1}).json["next_cursor"]

    # when
    answer = commerce_api.get(f"/orders/{five_line_order['order_id']}/lines", query={"cursor": cursor})

    # then
    assert answer.status == 400
    assert answer.json["type"].endswith("/invalid-cursor")


def test_list_lines_refuses_a_cursor_issued_to_another_caller(
    commerce_api: ApiClient, ops: ApiClient, five_line_order: dict[str, Any]
) -> None:
    # given
    path = f"/orders/{five_line_order['order_id']}/lines"
    cursor = ops.get(path, query={"limit": 1}).json["next_cursor"]

    # when
    answer = commerce_api.get(path, query={"cursor": cursor})

    # then
    assert answer.status == 400


# -- GET /users/me/orders (ECOM-002) --------------------------------------------------------------------


@pytest.mark.usefixtures("catalog", "clock")
def test_list_my_orders_pages_newest_first_with_one_query_per_page(commerce_api: ApiClient) -> None:
    # given
    placed = [placed_order(commerce_api, line("P-RED-TSHIRT", 1)) for _ in range(5)]
    placed_order(commerce_api.as_user("U200"), line("P-RED-TSHIRT", 1))

    # when
    with dynamodb_calls() as calls:
        answers = list(pages(commerce_api, "/users/me/orders", limit=2))

    # then
    newest_first = [order["order_id"] for order in reversed(placed)]
    assert [[o["order_id"] for o in page["items"]] for page in answers] == [
        newest_first[0:2],
        newest_first[2:4],
        newest_first[4:],
    ]
    assert [page["next_cursor"] is None for page in answers] == [False, False, True]
    assert calls.operations == ["Query"] * 3
    assert answers[0]["items"][0] == {
        "order_id": placed[-1]["order_id"],
        "user_id": "U100",
        "status": "Placed",
        "placed_at": placed[-1]["placed_at"],
        "updated_at": placed[-1]["placed_at"],
        "total": money(),
        "line_count": 1,
    }


@pytest.mark.usefixtures("clock")
def test_list_my_orders_answers_25_per_page_by_default(commerce_api: ApiClient, admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=100)
    placed = [placed_order(commerce_api, line("P-RED-TSHIRT", 1)) for _ in range(26)]

    # when
    answers = list(pages(commerce_api, "/users/me/orders"))

    # then
    assert [len(page["items"]) for page in answers] == [25, 1]
    assert answers[1]["items"][0]["order_id"] == placed[0]["order_id"]


def test_list_my_orders_answers_an_empty_last_page_when_i_have_none(commerce_api: ApiClient) -> None:
    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.get("/users/me/orders")

    # then
    assert answer.json == {"items": [], "next_cursor": None}
    assert calls.operations == ["Query"]


@pytest.mark.usefixtures("catalog")
def test_list_my_orders_refuses_the_cursor_of_another_user(commerce_api: ApiClient) -> None:
    # given
    for _ in range(2):
        placed_order(commerce_api, line("P-RED-TSHIRT", 1))
    cursor = commerce_api.get("/users/me/orders", query={"limit": 1}).json["next_cursor"]

    # when
    answer = commerce_api.as_user("U200").get("/users/me/orders", query={"cursor": cursor})

    # then
    assert answer.status == 400
    assert answer.json["type"].endswith("/invalid-cursor")


@pytest.mark.usefixtures("catalog")
def test_list_my_orders_refuses_a_cursor_with_a_forged_signature(commerce_api: ApiClient) -> None:
    # given
    for _ in range(2):
        placed_order(commerce_api, line("P-RED-TSHIRT", 1))
    cursor = commerce_api.get("/users/me/orders", query={"limit": 1}).json["next_cursor"]
    body, _ = cursor.split(".")

    # when
    answer = commerce_api.get("/users/me/orders", query={"cursor": f"{body}.c2lnbmVkLWJ5LW1l"})

    # then
    assert answer.status == 400


@pytest.mark.parametrize(
    ("path", "too_large"),
    [
        pytest.param("/orders/01J00000000000000000000000/lines", 201, id="lines: 200 at most"),
        pytest.param("/users/me/orders", 101, id="my orders: 100 at most"),
    ],
)
def test_list_pages_are_bounded(commerce_api: ApiClient, path: str, too_large: int) -> None:
    # when
    answer = commerce_api.get(path, query={"limit": too_large})

    # then
    assert answer.status == 422
    assert [error["loc"] for error in answer.json["errors"]] == [["query", "limit"]]


# -- POST /orders/{order_id}/cancel ------------------------------------------------------------------


@pytest.mark.usefixtures("catalog")
def test_cancel_order_restocks_every_line_and_writes_one_order_cancelled_event(
    commerce_api: ApiClient,
) -> None:
    # given
    placed = placed_order(commerce_api, line("P-RED-TSHIRT", 2, 1999), line("P-BLUE-MUG", 5, 899))

    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.post(f"/orders/{placed['order_id']}/cancel")

    # then
    # the order, its products' stock layouts (where the units go back), the transaction
    assert calls.operations == ["Query", "BatchGetItem", "TransactWriteItems"]
    assert answer.status == 200
    assert answer.json["status"] == "Cancelled"
    assert answer.json["lines"] == placed["lines"]
    assert answer.headers["ETag"] == '"2"'
    assert (stock(commerce_api, "P-RED-TSHIRT"), stock(commerce_api, "P-BLUE-MUG")) == (10, 5)
    [cancelled] = outbox_events(events.ORDER_CANCELLED)
    assert cancelled["detail"]["cancelled_by"] == "U100"
    assert commerce_api.get(f"/orders/{placed['order_id']}").json["status"] == "Cancelled"
    assert commerce_api.get("/users/me/orders").json["items"][0]["status"] == "Cancelled"


@pytest.mark.usefixtures("catalog")
def test_cancel_order_twice_changes_nothing_the_second_time(commerce_api: ApiClient) -> None:
    # given
    placed = placed_order(commerce_api, line("P-RED-TSHIRT", 2), line("P-BLUE-MUG", 1, 899))
    first = commerce_api.post(f"/orders/{placed['order_id']}/cancel")
    before = table_items()

    # when
    second = commerce_api.post(f"/orders/{placed['order_id']}/cancel")

    # then
    assert (second.status, second.json) == (200, first.json)
    assert table_items() == before
    assert len(outbox_events(events.ORDER_CANCELLED)) == 1
    assert (stock(commerce_api, "P-RED-TSHIRT"), stock(commerce_api, "P-BLUE-MUG")) == (10, 5)


@pytest.mark.usefixtures("catalog")
def test_cancel_order_of_another_user_answers_404_and_changes_nothing(commerce_api: ApiClient) -> None:
    # given
    placed = placed_order(commerce_api, line("P-RED-TSHIRT", 2))
    before = table_items()

    # when
    answer = commerce_api.as_user("U200").post(f"/orders/{placed['order_id']}/cancel")

    # then
    assert answer.status == 404
    assert table_items() == before


@pytest.mark.usefixtures("catalog")
def test_cancel_order_of_another_user_is_allowed_to_ops(commerce_api: ApiClient, ops: ApiClient) -> None:
    # given
    placed = placed_order(commerce_api, line("P-RED-TSHIRT", 2))

    # when
    answer = ops.post(f"/orders/{placed['order_id']}/cancel")

    # then
    assert answer.status == 200
    [cancelled] = outbox_events(events.ORDER_CANCELLED)
    assert cancelled["detail"]["cancelled_by"] == "U-OPS"
    assert stock(commerce_api, "P-RED-TSHIRT") == 10


@pytest.mark.usefixtures("catalog")
def test_cancel_order_refuses_a_shipped_order(commerce_api: ApiClient) -> None:
    # given
    shipped = seed_order(
        bootstrap.repository(), "U100", datetime(2026, 3, 1, tzinfo=UTC), shard=0, status=OrderStatus.SHIPPED
    )
    before = table_items()

    # when
    answer = commerce_api.post(f"/orders/{shipped.order_id}/cancel")

    # then
    assert answer.status == 409
    assert answer.json["type"].endswith("/invalid-transition")
    assert (answer.json["current_status"], answer.json["target_status"]) == ("Shipped", "Cancelled")
    assert table_items() == before


def test_cancel_order_answers_404_for_an_unknown_order(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.post("/orders/01J00000000000000000000000/cancel")

    # then
    assert answer.status == 404
    assert table_items() == []
