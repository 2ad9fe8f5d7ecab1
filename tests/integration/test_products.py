"""Catalog and stock endpoints against moto: create, get, update (If-Match), list by category, restock."""

from local.harness.client import ApiClient
from local.harness.factories import (
    create_product,
    create_products,
    idempotency_key,
    if_match,
    money,
    pages,
    product_body,
)
from local.harness.tables import table_items
from tests.support.calls import dynamodb_calls


def test_create_product_as_admin_answers_201_with_location_and_etag_in_one_write(admin: ApiClient) -> None:
    # given
    body = product_body("P-RED-TSHIRT", category="tshirts", price=1999, available=7)

    # when
    with dynamodb_calls() as calls:
        answer = admin.post("/products", body)

    # then
    assert answer.status == 201
    assert answer.headers["Location"] == "/products/P-RED-TSHIRT"
    assert answer.headers["ETag"] == '"1"'
    assert answer.json == {**body, "updated_at": answer.json["updated_at"], "rating": {"count": 0, "average": None}}
    # the product, its stock layout and its one bucket (decision 151)
    assert calls.operations == ["TransactWriteItems"]


def test_create_product_as_a_plain_user_answers_403_and_writes_nothing(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.post("/products", product_body())

    # then
    assert answer.status == 403
    assert answer.content_type == "application/problem+json"
    assert table_items() == []


def test_create_product_rejects_an_existing_product_id(admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", price=1999)

    # when
    answer = admin.post("/products", product_body("P-RED-TSHIRT", price=1))

    # then
    assert answer.status == 409
    assert answer.json["id"] == "P-RED-TSHIRT"
    assert admin.get("/products/P-RED-TSHIRT").json["price"] == money(1999)


def test_create_product_rejects_a_malformed_body_with_field_locations_and_writes_nothing(
    admin: ApiClient,
) -> None:
    # given
    body = {
        **product_body(),
        "product_id": "lowercase",
        "price": {"amount": -1, "currency": "eur"},
        "available": -5,
    }

    # when
    answer = admin.post("/products", body)

    # then
    assert answer.status == 422
    locations = {tuple(error["loc"]) for error in answer.json["errors"]}
    assert locations == {
        ("body", "product_id"),
        ("body", "price", "amount"),
        ("body", "price", "currency"),
        ("body", "available"),
    }
    assert table_items() == []


def test_get_product_answers_price_stock_and_etag_with_one_read(commerce_api: ApiClient, admin: ApiClient) -> None:
    # given
    created = create_product(admin, "P-RED-TSHIRT", available=7)

    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.get("/products/P-RED-TSHIRT")

    # then
    assert answer.status == 200
    assert answer.json == created
    assert answer.headers["ETag"] == '"1"'
    # the product and its layout, then every bucket's level: strong, two round trips (decision 157)
    assert calls.operations == ["BatchGetItem", "BatchGetItem"]


def test_get_product_answers_404_problem_for_an_unknown_product(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get("/products/P-NOPE")

    # then
    assert answer.status == 404
    assert answer.json["resource"] == "product"
    assert answer.json["id"] == "P-NOPE"


def test_update_product_with_the_current_etag_answers_the_new_version(admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", price=1999)

    # when
    with dynamodb_calls() as calls:
        answer = admin.patch(
            "/products/P-RED-TSHIRT", {"name": "Crimson Tee", "price": money(2499)}, headers=if_match('"1"')
        )

    # then
    assert answer.status == 200
    assert answer.headers["ETag"] == '"2"'
    assert answer.json["name"] == "Crimson Tee"
    assert answer.json["price"] == money(2499)
    # a price reaches the product and the layout in one transaction, then its one bucket is read
    # (where it stands), sealed and opened, the layout's mark cleared (decision 225), and the product
    # is read as GET answers it
    assert calls.operations == [
        "GetItem",
        "TransactWriteItems",
        "BatchGetItem",
        "UpdateItem",
        "UpdateItem",
        "UpdateItem",
        "BatchGetItem",
        "BatchGetItem",
    ]
    assert admin.get("/products/P-RED-TSHIRT").headers["ETag"] == '"2"'


def test_update_product_without_if_match_answers_428_and_changes_nothing(admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT")
    before = table_items()

    # when
    answer = admin.patch("/products/P-RED-TSHIRT", {"name": "Crimson Tee"})

    # then
    assert answer.status == 428
    assert answer.content_type == "application/problem+json"
    assert table_items() == before


def test_update_product_with_a_stale_etag_answers_412_with_the_current_version(admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT")
    admin.patch("/products/P-RED-TSHIRT", {"name": "Crimson Tee"}, headers=if_match('"1"'))
    before = table_items()

    # when
    answer = admin.patch("/products/P-RED-TSHIRT", {"name": "Scarlet Tee"}, headers=if_match('"1"'))

    # then
    assert answer.status == 412
    assert answer.json["current_version"] == 2
    assert table_items() == before


def test_update_product_as_a_plain_user_answers_403(commerce_api: ApiClient, admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT")
    before = table_items()

    # when
    answer = commerce_api.patch("/products/P-RED-TSHIRT", {"name": "Mine now"}, headers=if_match('"1"'))

    # then
    assert answer.status == 403
    assert table_items() == before


def test_update_product_answers_404_for_an_unknown_product_and_creates_nothing(admin: ApiClient) -> None:
    # when
    answer = admin.patch("/products/P-NOPE", {"name": "Ghost"}, headers=if_match('"1"'))

    # then
    assert answer.status == 404
    assert table_items() == []


def test_update_product_refuses_stock_changes_which_go_through_restock(admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=3)

    # when
    answer = admin.patch("/products/P-RED-TSHIRT", {"available": 1000}, headers=if_match('"1"'))

    # then
    assert answer.status == 422
    assert [error["loc"] for error in answer.json["errors"]] == [["body", "available"]]
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == 3


def test_update_product_category_moves_it_between_category_listings(admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", category="tshirts")

    # when
    admin.patch("/products/P-RED-TSHIRT", {"category": "sale"}, headers=if_match('"1"'))

    # then
    assert admin.get("/products", query={"category": "tshirts"}).json["items"] == []
    listed = admin.get("/products", query={"category": "sale"}).json["items"]
    assert [p["product_id"] for p in listed] == ["P-RED-TSHIRT"]


def test_list_products_pages_through_a_category_by_product_id_one_query_per_page(admin: ApiClient) -> None:
    # given
    ids = create_products(admin, 5, prefix="P-SHIRT", category="tshirts")
    create_product(admin, "P-MUG", category="mugs")

    # when
    with dynamodb_calls() as calls:
        answers = list(pages(admin, "/products", category="tshirts", limit=2))

    # then
    assert [[p["product_id"] for p in page["items"]] for page in answers] == [ids[0:2], ids[2:4], ids[4:]]
    assert [page["next_cursor"] is None for page in answers] == [False, False, True]
    assert calls.operations == ["Query"] * 3
    assert answers[0]["items"][0] == {
        "product_id": ids[0],
        "name": "Shirt 01",
        "category": "tshirts",
        "price": money(),
    }


def test_list_products_of_an_empty_category_answers_an_empty_last_page(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get("/products", query={"category": "nothing-here"})

    # then
    assert answer.status == 200
    assert answer.json == {"items": [], "next_cursor": None}


def test_list_products_refuses_a_cursor_from_another_category(admin: ApiClient) -> None:
    # given
    create_products(admin, 3, prefix="P-SHIRT", category="tshirts")
    create_products(admin, 3, prefix="P-MUG", category="mugs")
    cursor = admin.get("/products", query={"category": "tshirts", "limit": 1}).json["next_cursor"]

    # when
    answer = admin.get("/products", query={"category": "mugs", "limit": 1, "cursor": cursor})

    # then
    assert answer.status == 400
    assert answer.content_type == "application/problem+json"
    assert answer.json["type"].endswith("/invalid-cursor")


def test_list_products_refuses_a_forged_cursor(admin: ApiClient) -> None:
    # given
    create_products(admin, 3, prefix="P-SHIRT", category="tshirts")
    cursor = admin.get("/products", query={"category": "tshirts", "limit": 1}).json["next_cursor"]
    body, signature = cursor.split(".")
    forged = body[:-2] + ("AA" if body[-2:] != "AA" else "BB") + "." + signature

    # when
    answer = admin.get("/products", query={"category": "tshirts", "cursor": forged})

    # then
    assert answer.status == 400


def test_list_products_bounds_the_page_size(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get("/products", query={"category": "tshirts", "limit": 101})

    # then
    assert answer.status == 422
    assert [error["loc"] for error in answer.json["errors"]] == [["query", "limit"]]


def test_restock_adds_stock_once_and_a_replay_answers_the_first_response(admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=2)
    key = idempotency_key()

    # when
    with dynamodb_calls() as first_calls:
        first = admin.post("/products/P-RED-TSHIRT/stock", {"quantity": 5}, headers=key)
    with dynamodb_calls() as replay_calls:
        replay = admin.post("/products/P-RED-TSHIRT/stock", {"quantity": 5}, headers=key)

    # then
    assert first.status == 201
    assert first.json == {
        "product_id": "P-RED-TSHIRT",
        "quantity_added": 5,
        "restocked_at": first.json["restocked_at"],
    }
    assert "Idempotent-Replayed" not in first.headers
    assert (replay.status, replay.json) == (first.status, first.json)
    assert replay.headers["Idempotent-Replayed"] == "true"
    # the layout names the buckets the units are spread over (decision 158)
    assert first_calls.operations == replay_calls.operations == ["GetItem", "TransactWriteItems"]
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == 7


def test_restock_with_a_reused_key_and_another_body_answers_422(admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=2)
    key = idempotency_key()
    admin.post("/products/P-RED-TSHIRT/stock", {"quantity": 5}, headers=key)

    # when
    answer = admin.post("/products/P-RED-TSHIRT/stock", {"quantity": 50}, headers=key)

    # then
    assert answer.status == 422
    assert answer.json["type"].endswith("/idempotency-key-reused")
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == 7


def test_restock_without_an_idempotency_key_answers_400_and_changes_nothing(admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=2)
    before = table_items()

    # when
    answer = admin.post("/products/P-RED-TSHIRT/stock", {"quantity": 5})

    # then
    assert answer.status == 400
    assert answer.json["type"].endswith("/idempotency-key-missing")
    assert table_items() == before


def test_restock_as_a_plain_user_answers_403_and_changes_nothing(commerce_api: ApiClient, admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=2)
    before = table_items()

    # when
    answer = commerce_api.post("/products/P-RED-TSHIRT/stock", {"quantity": 5}, headers=idempotency_key())

    # then
    assert answer.status == 403
    assert table_items() == before


def test_restock_of_an_unknown_product_answers_404_and_records_no_key(admin: ApiClient) -> None:
    # when
    answer = admin.post("/products/P-NOPE/stock", {"quantity": 5}, headers=idempotency_key())

    # then
    assert answer.status == 404
    assert answer.json["id"] == "P-NOPE"
    assert table_items() == []


def test_restock_rejects_a_non_positive_quantity(admin: ApiClient) -> None:
    # given
    create_product(admin, "P-RED-TSHIRT", available=2)

    # when
    answer = admin.post("/products/P-RED-TSHIRT/stock", {"quantity": 0}, headers=idempotency_key())

    # then
    assert answer.status == 422
    assert [error["loc"] for error in answer.json["errors"]] == [["body", "quantity"]]
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == 2
