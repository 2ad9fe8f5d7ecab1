"""The cart against moto (seed 001 AP 8): read in one Query, changed under its version, checked out in
the order placement's one TransactWriteItems."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from local.harness.client import Answer, ApiClient
from local.harness.factories import create_product, create_products, idempotency_key, if_match, money
from local.harness.tables import table_items
from shopfeed.commerce import events, items, keys
from shopfeed.commerce.cart import services
from shopfeed.commerce.models import MAX_CART_LINES
from shopfeed.platform import clients, dynamo
from shopfeed.platform.dynamo import MAX_TRANSACTION_ITEMS
from shopfeed.platform.idempotency import ENTITY_TYPE as IDEMPOTENCY_KEY
from tests.support.calls import dynamodb_calls

CART = "/users/me/cart"
PROBLEMS = "https://shopfeed.dev/problems/"


def cart_line(client: ApiClient, product_id: str, quantity: int = 1, **options: Any) -> Answer:
    return client.put(f"{CART}/items/{product_id}", {"quantity": quantity}, **options)


def check_out(client: ApiClient, key: str | None = None, **headers: str) -> Answer:
    return client.post(
        f"{CART}/checkout", headers={"Idempotency-Key": key or idempotency_key()["Idempotency-Key"]} | headers
    )


def entities(entity_type: str) -> list[dict[str, Any]]:
    return [item for item in table_items() if item["entity_type"] == entity_type]


def stock(product_id: str) -> int:
    """The units of every stock bucket of the product."""
    return sum(int(b["available"]) for b in entities(items.STOCK_BUCKET) if b["product_id"] == product_id)


@pytest.fixture
def catalog(admin: ApiClient) -> None:
    """Two products the cart tests put: ten shirts, five mugs."""
    create_product(admin, "P-RED-TSHIRT", price=1999, available=10)
    create_product(admin, "P-BLUE-MUG", category="mugs", price=899, available=5)


# -- GET / PUT / DELETE -------------------------------------------------------------------------------


@pytest.mark.usefixtures("catalog")
def test_a_line_is_put_at_the_price_now_and_the_cart_is_read_in_one_query(commerce_api: ApiClient) -> None:
    # when
    with dynamodb_calls() as writes:
        put = cart_line(commerce_api, "P-RED-TSHIRT", 2)
    cart_line(commerce_api, "P-BLUE-MUG", 1)
    with dynamodb_calls() as reads:
        answer = commerce_api.get(CART)

    # then
    assert put.status == 200, put.text
    assert writes.operations == ["GetItem", "Query", "TransactWriteItems"]
    assert reads.operations == ["Query"]
    assert answer.status == 200
    assert answer.headers["ETag"] == '"2"'
    cart = answer.json
    assert [(line["product_id"], line["quantity"], line["unit_price"]) for line in cart["lines"]] == [
        ("P-BLUE-MUG", 1, money(899)),
        ("P-RED-TSHIRT", 2, money(1999)),
    ]
    assert cart["total"] == money(2 * 1999 + 899)
    assert cart["version"] == 2
    assert cart["expires_at"] > cart["updated_at"]


def test_a_cart_never_written_is_empty_at_version_zero(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get(CART)

    # then
    assert (answer.status, answer.headers["ETag"]) == (200, '"0"')
    assert answer.json == {"version": 0, "updated_at": None, "expires_at": None, "lines": [], "total": None}


@pytest.mark.usefixtures("catalog")
def test_putting_a_line_again_sets_its_quantity_and_takes_the_price_now(
    commerce_api: ApiClient, admin: ApiClient
) -> None:
    # given
    first = cart_line(commerce_api, "P-RED-TSHIRT", 2).json["lines"][0]
    admin.patch("/products/P-RED-TSHIRT", {"price": money(2499)}, headers=if_match('"1"'))

    # when
    answer = cart_line(commerce_api, "P-RED-TSHIRT", 5)

    # then
    [line] = answer.json["lines"]
    assert (line["quantity"], line["unit_price"], line["added_at"]) == (5, money(2499), first["added_at"])
    assert len(entities(items.CART_LINE)) == 1


@pytest.mark.usefixtures("catalog")
def test_deleting_a_line_removes_it_and_deleting_it_again_writes_nothing(commerce_api: ApiClient) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT", 2)
    cart_line(commerce_api, "P-BLUE-MUG", 1)

    # when
    removed = commerce_api.delete(f"{CART}/items/P-RED-TSHIRT")
    with dynamodb_calls() as calls:
        again = commerce_api.delete(f"{CART}/items/P-RED-TSHIRT")

    # then
    assert [line["product_id"] for line in removed.json["lines"]] == ["P-BLUE-MUG"]
    assert (again.status, again.json) == (200, removed.json)
    assert calls.operations == ["Query"]
    assert [item["product_id"] for item in entities(items.CART_LINE)] == ["P-BLUE-MUG"]


@pytest.mark.usefixtures("catalog")
def test_if_match_on_the_cart_refuses_a_stale_change_and_writes_nothing(commerce_api: ApiClient) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT", 2)  # version 1
    cart_line(commerce_api, "P-BLUE-MUG", 1)  # version 2
    before = table_items()

    # when
    stale_put = cart_line(commerce_api, "P-RED-TSHIRT", 9, headers=if_match('"1"'))
    stale_delete = commerce_api.delete(f"{CART}/items/P-BLUE-MUG", headers=if_match('"1"'))
    stale_checkout = check_out(commerce_api, **if_match('"1"'))
    current = cart_line(commerce_api, "P-RED-TSHIRT", 3, headers=if_match('"2"'))

    # then
    for answer in (stale_put, stale_delete, stale_checkout):
        assert answer.status == 412, answer.text
        assert answer.json["current_version"] == 2
    assert (current.status, current.headers["ETag"]) == (200, '"3"')
    assert [i for i in before if i["entity_type"] != items.CART_LINE and i["SK"] != keys.CART] == [
        i for i in table_items() if i["entity_type"] != items.CART_LINE and i["SK"] != keys.CART
    ]


@pytest.mark.usefixtures("catalog")
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("P-RED-TSHIRT", {"quantity": 0}),
        ("P-RED-TSHIRT", {"quantity": 101}),
        ("P-RED-TSHIRT", {"quantity": "2"}),
        ("P-RED-TSHIRT", {"quantity": True}),
        ("P-RED-TSHIRT", {"quantity": 2.5}),
        ("P-RED-TSHIRT", {"quantity": 2, "unit_price": money(1)}),
        ("P-RED-TSHIRT", {}),
        ("p-lower-case", {"quantity": 1}),
    ],
)
def test_bad_input_is_a_problem_and_changes_nothing(commerce_api: ApiClient, path: str, body: Any) -> None:
    # given
    cart_line(commerce_api, "P-BLUE-MUG", 1)
    before = table_items()

    # when
    answer = commerce_api.put(f"{CART}/items/{path}", body)

    # then
    assert answer.status in (400, 422), answer.text
    assert answer.content_type == "application/problem+json"
    assert table_items() == before


@pytest.mark.usefixtures("catalog")
def test_an_unknown_product_is_not_put_in_the_cart(commerce_api: ApiClient) -> None:
    # when
    answer = cart_line(commerce_api, "P-NOPE")

    # then
    assert answer.status == 404
    assert answer.content_type == "application/problem+json"
    assert entities(items.CART_LINE) == []
    assert entities(items.CART) == []


def test_a_cart_is_bounded_and_the_bound_changes_nothing(commerce_api: ApiClient, admin: ApiClient) -> None:
    # given
    product_ids = create_products(admin, MAX_CART_LINES + 1, available=5)
    for product_id in product_ids[:MAX_CART_LINES]:
        assert cart_line(commerce_api, product_id).status == 200
    before = table_items()

    # when
    answer = cart_line(commerce_api, product_ids[-1])
    after_refusal = table_items()
    more_of_one = cart_line(commerce_api, product_ids[0], 3)

    # then
    assert answer.status == 409
    assert answer.json["type"] == PROBLEMS + "cart-full"
    assert answer.json["max_lines"] == MAX_CART_LINES
    assert after_refusal == before
    assert more_of_one.status == 200  # a line already there still changes
    assert len(entities(items.CART_LINE)) == MAX_CART_LINES


def put_days_ago(client: ApiClient, monkeypatch: pytest.MonkeyPatch, days: int) -> datetime:
    """Two P-RED-TSHIRT in the cart, put ``days`` ago; the moment it was put."""
    then = datetime.now(UTC) - timedelta(days=days)
    with monkeypatch.context() as patched:
        patched.setattr(services, "utc_now", lambda: then)
        assert cart_line(client, "P-RED-TSHIRT", 2).status == 200
    return then


@pytest.mark.usefixtures("catalog")
def test_an_abandoned_cart_expires_and_its_leftovers_go_with_the_next_change(
    commerce_api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a cart last changed 31 days ago
    long_ago = put_days_ago(commerce_api, monkeypatch, 31)
    [header] = entities(items.CART)
    assert header["expires_at"] == int((long_ago + services.CART_RETENTION).timestamp())

    # when
    expired = commerce_api.get(CART)
    changed = cart_line(commerce_api, "P-BLUE-MUG", 1)

    # then
    assert expired.json["lines"] == []
    assert expired.json["version"] == 1
    assert [line["product_id"] for line in changed.json["lines"]] == ["P-BLUE-MUG"]
    assert [item["product_id"] for item in entities(items.CART_LINE)] == ["P-BLUE-MUG"]


@pytest.mark.usefixtures("catalog")
def test_a_change_refreshes_the_ttl_of_lines_falling_behind_and_the_cart_expires_with_the_earliest(
    commerce_api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a line put 10 days ago
    put_days_ago(commerce_api, monkeypatch, 10)

    # when
    cart_line(commerce_api, "P-BLUE-MUG", 1)

    # then every line and the header expire a retention after the last change
    [header] = entities(items.CART)
    expiries = [line["expires_at"] for line in entities(items.CART_LINE)]
    assert min(expiries) >= int((datetime.now(UTC) + services.CART_RETENTION - timedelta(minutes=1)).timestamp())
    assert header["expires_at"] == min(expiries)


# -- checkout ----------------------------------------------------------------------------------------


@pytest.mark.usefixtures("catalog")
def test_checkout_places_the_order_and_empties_the_cart_in_one_transaction(commerce_api: ApiClient) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT", 2)
    cart_line(commerce_api, "P-BLUE-MUG", 1)

    # when
    with dynamodb_calls() as calls:
        answer = check_out(commerce_api)

    # then
    assert answer.status == 201, answer.text
    # the cart, the products' stock layouts (a container's first order of them: decision 154), one transaction
    assert calls.operations == ["Query", "BatchGetItem", "TransactWriteItems"]
    order = answer.json
    assert answer.headers["Location"] == f"/orders/{order['order_id']}"
    assert [(line["product_id"], line["quantity"], line["unit_price"]) for line in order["lines"]] == [
        ("P-BLUE-MUG", 1, money(899)),
        ("P-RED-TSHIRT", 2, money(1999)),
    ]
    assert order["total"] == money(2 * 1999 + 899)
    assert commerce_api.get(f"/orders/{order['order_id']}").json == order
    assert (stock("P-RED-TSHIRT"), stock("P-BLUE-MUG")) == (8, 4)
    assert entities(items.CART_LINE) == []
    cart = commerce_api.get(CART)
    assert (cart.json["lines"], cart.json["version"]) == ([], 3)
    [placed] = [e for e in entities(items.OUTBOX_EVENT) if e["event_type"] == events.ORDER_PLACED]
    assert placed["aggregate_id"] == order["order_id"]
    assert len(entities(IDEMPOTENCY_KEY)) == 1


@pytest.mark.usefixtures("catalog")
def test_a_retried_checkout_answers_the_same_order_and_writes_nothing(commerce_api: ApiClient) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT", 2)
    first = check_out(commerce_api, key="checkout-1")
    after_first = table_items()

    # when the cart is empty again, and then holds something else
    with dynamodb_calls() as calls:
        replay = check_out(commerce_api, key="checkout-1")
    assert table_items() == after_first
    cart_line(commerce_api, "P-BLUE-MUG", 1)
    after_put = table_items()
    with dynamodb_calls() as refill_calls:
        replay_of_full_cart = check_out(commerce_api, key="checkout-1")

    # then
    assert (replay.status, replay.json) == (201, first.json)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert calls.operations == ["Query", "GetItem"]  # the cart is empty: the key record answers
    assert (replay_of_full_cart.status, replay_of_full_cart.json) == (201, first.json)
    # cancelled by the key record (after reading the layout of the product new to this container)
    assert refill_calls.operations == ["Query", "BatchGetItem", "TransactWriteItems"]
    assert table_items() == after_put
    assert stock("P-RED-TSHIRT") == 8


@pytest.mark.usefixtures("catalog")
def test_a_checkout_key_used_for_another_request_is_refused(commerce_api: ApiClient) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT", 2)
    commerce_api.post(
        "/orders",
        {"lines": [{"product_id": "P-BLUE-MUG", "quantity": 1, "unit_price": money(899)}]},
        headers={"Idempotency-Key": "k-1"},
    )

    # when
    answer = check_out(commerce_api, key="k-1")

    # then
    assert answer.status == 422
    assert len(entities(items.CART_LINE)) == 1


@pytest.mark.usefixtures("catalog")
def test_a_price_changed_since_a_line_was_put_refuses_the_checkout_and_writes_nothing(
    commerce_api: ApiClient, admin: ApiClient
) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT", 2)
    cart_line(commerce_api, "P-BLUE-MUG", 1)
    admin.patch("/products/P-BLUE-MUG", {"price": money(999)}, headers=if_match('"1"'))
    before = table_items()

    # when
    answer = check_out(commerce_api)

    # then
    assert answer.status == 409
    assert answer.json["type"] == PROBLEMS + "price-changed"
    assert answer.json["products"] == [
        {"product_id": "P-BLUE-MUG", "quoted_unit_price": money(899), "current_unit_price": money(999)}
    ]
    assert table_items() == before

    # and putting the line again accepts the new price
    cart_line(commerce_api, "P-BLUE-MUG", 1)
    assert check_out(commerce_api).json["total"] == money(2 * 1999 + 999)


@pytest.mark.usefixtures("catalog")
def test_checkout_of_more_than_the_stock_refuses_and_keeps_the_cart(commerce_api: ApiClient) -> None:
    # given
    cart_line(commerce_api, "P-BLUE-MUG", 6)
    before = table_items()

    # when
    answer = check_out(commerce_api)

    # then
    assert answer.status == 409
    assert answer.json["type"] == PROBLEMS + "insufficient-stock"
    assert table_items() == before


def test_an_empty_cart_is_not_checked_out(commerce_api: ApiClient) -> None:
    # when
    answer = check_out(commerce_api)

    # then
    assert answer.status == 409
    assert answer.json["type"] == PROBLEMS + "cart-empty"
    assert table_items() == []


@pytest.mark.usefixtures("catalog")
def test_checkout_without_an_idempotency_key_is_refused(commerce_api: ApiClient) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT")
    before = table_items()

    # when
    answer = commerce_api.post(f"{CART}/checkout")

    # then
    assert answer.status == 400
    assert table_items() == before


def test_a_full_cart_checks_out_in_one_transaction_within_the_item_limit(
    commerce_api: ApiClient, admin: ApiClient
) -> None:
    # given
    for product_id in create_products(admin, MAX_CART_LINES, available=5):
        cart_line(commerce_api, product_id)

    # when
    with dynamodb_calls() as calls:
        answer = check_out(commerce_api)

    # then
    assert answer.status == 201, answer.text
    [(_, sent)] = [c for c in calls.requests if c[0] == "TransactWriteItems"]
    # per line: order line, stock, cart line; then header, history, event, key record, cart header
    assert len(sent["TransactItems"]) == 3 * MAX_CART_LINES + 5 <= MAX_TRANSACTION_ITEMS
    assert entities(items.CART_LINE) == []


@pytest.mark.usefixtures("catalog")
def test_someone_elses_cart_is_neither_seen_nor_changed(commerce_api: ApiClient) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT", 2)
    other = commerce_api.as_user("U200")

    # when
    seen = other.get(CART)
    cart_line(other, "P-BLUE-MUG", 1)
    removed = other.delete(f"{CART}/items/P-RED-TSHIRT")
    checked_out = check_out(other)

    # then
    assert seen.json["lines"] == []
    assert [line["product_id"] for line in removed.json["lines"]] == ["P-BLUE-MUG"]
    assert checked_out.json["user_id"] == "U200"
    assert [line["product_id"] for line in commerce_api.get(CART).json["lines"]] == ["P-RED-TSHIRT"]
    assert commerce_api.as_user(None).get(CART).status == 401


@pytest.mark.usefixtures("catalog")
@pytest.mark.parametrize("etag", ["", "garbage", 'W/"0"', "*", '"0"x'])
def test_an_if_match_that_is_no_etag_never_matches_even_a_cart_never_written(
    commerce_api: ApiClient, etag: str
) -> None:
    # given
    before = table_items()

    # when
    answers = [
        cart_line(commerce_api, "P-RED-TSHIRT", headers=if_match(etag)),
        commerce_api.delete(f"{CART}/items/P-RED-TSHIRT", headers=if_match(etag)),
        check_out(commerce_api, **if_match(etag)),
    ]

    # then
    assert [answer.status for answer in answers] == [412, 412, 412]
    assert table_items() == before


@pytest.fixture
def first_read_is_stale(commerce_api: ApiClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next request's first read of U100's cart sees it one change ago (a change lands between that
    read and the request's transaction); later reads see the table."""
    from shopfeed.commerce import bootstrap

    carts = bootstrap.carts()
    stale = [carts.read("U100")]
    cart_line(commerce_api, "P-BLUE-MUG", 1)
    read = carts.read
    monkeypatch.setattr(carts, "read", lambda user_id: stale.pop() if stale else read(user_id))


@pytest.mark.usefixtures("catalog")
def test_a_checkout_whose_cart_changed_since_its_read_is_cancelled_and_orders_the_cart_read_again(
    commerce_api: ApiClient, request: pytest.FixtureRequest
) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT", 2)
    request.getfixturevalue("first_read_is_stale")

    # when
    with dynamodb_calls() as calls:
        answer = check_out(commerce_api)

    # then
    assert answer.status == 201, answer.text
    # (the layouts of the cart's products as read, then of the product the cart gained)
    assert calls.operations == ["BatchGetItem", "TransactWriteItems", "Query", "BatchGetItem", "TransactWriteItems"]
    assert [line["product_id"] for line in answer.json["lines"]] == ["P-BLUE-MUG", "P-RED-TSHIRT"]
    assert entities(items.CART_LINE) == []
    assert len(entities(items.ORDER)) == 1


@pytest.mark.usefixtures("catalog")
def test_a_checkout_naming_a_cart_that_changed_since_its_read_is_412_and_writes_nothing(
    commerce_api: ApiClient, request: pytest.FixtureRequest
) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT", 2)  # version 1
    request.getfixturevalue("first_read_is_stale")  # version 2 in the table, 1 in the read
    before = table_items()

    # when
    answer = check_out(commerce_api, **if_match('"1"'))

    # then
    assert answer.status == 412
    assert answer.json["current_version"] == 2
    assert table_items() == before


@pytest.mark.usefixtures("catalog")
def test_a_put_whose_cart_changed_since_its_read_is_applied_to_the_cart_read_again(
    commerce_api: ApiClient, request: pytest.FixtureRequest
) -> None:
    # given
    cart_line(commerce_api, "P-RED-TSHIRT", 2)
    request.getfixturevalue("first_read_is_stale")

    # when
    answer = cart_line(commerce_api, "P-RED-TSHIRT", 4)

    # then
    assert answer.status == 200
    assert answer.json["version"] == 3
    assert sorted((i["product_id"], i["quantity"]) for i in entities(items.CART_LINE)) == [
        ("P-BLUE-MUG", 1),
        ("P-RED-TSHIRT", 4),
    ]


@pytest.mark.usefixtures("catalog")
def test_a_checkout_key_past_its_retention_answers_no_order_from_an_empty_cart(commerce_api: ApiClient) -> None:
    # given a checkout whose key record's retention has passed (TTL lags: still stored)
    cart_line(commerce_api, "P-RED-TSHIRT", 2)
    assert check_out(commerce_api, key="checkout-old").status == 201
    [record] = entities(IDEMPOTENCY_KEY)
    clients.dynamodb().put_item(
        TableName="CommerceTable", Item=dynamo.serialize(record | {"expires_at": dynamo.now_epoch() - 1})
    )

    # when the key comes again to the cart it emptied
    again = check_out(commerce_api, key="checkout-old")

    # then the key is new again: the cart is empty
    assert again.status == 409
    assert again.json["type"] == PROBLEMS + "cart-empty"
