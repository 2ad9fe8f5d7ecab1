"""Review routes against moto: only buyers review (checked in the write), one review per user per
product, edits with If-Match, deletes, and the three lists in order with their round trips."""

from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import pytest

from local.harness.client import ApiClient
from local.harness.factories import (
    SteppingClock,
    create_product,
    if_match,
    pages,
    record_purchase,
    review_body,
    reviewed,
)
from local.harness.tables import table_items
from shopfeed.commerce import bootstrap, items, keys
from shopfeed.platform.errors import StaleVersion
from tests.support.calls import dynamodb_calls

PRODUCT = "P-RED-TSHIRT"
REVIEWS = f"/products/{PRODUCT}/reviews"


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SteppingClock:
    """Every review is written one second after the one before (their order is the test's)."""
    stepping = SteppingClock(datetime(2026, 11, 22, 10, tzinfo=UTC))
    monkeypatch.setattr("shopfeed.commerce.reviews.services.utc_now", stepping)
    return stepping


@pytest.fixture
def shop(admin: ApiClient) -> None:
    create_product(admin, PRODUCT)
    create_product(admin, "P-BLK-CAP")


def stored_reviews() -> list[dict[str, Any]]:
    return [item for item in table_items() if item["entity_type"] == items.REVIEW]


def buyer(api: ApiClient, user_id: str, product_id: str = PRODUCT) -> ApiClient:
    record_purchase(user_id, product_id)
    return api.as_user(user_id)


# -- writing ---------------------------------------------------------------------------------------


def test_a_buyer_reviews_in_one_round_trip_and_gets_201_with_location_and_etag(
    commerce_api: ApiClient, shop: None
) -> None:
    # given
    ada = buyer(commerce_api, "U100")
    # when
    with dynamodb_calls() as calls:
        answer = ada.post(REVIEWS, review_body(rating=4, title="Nice", text="Good fit."))
    # then
    assert answer.status == 201, answer.text
    assert calls.operations == ["TransactWriteItems"]
    assert answer.headers["Location"] == f"{REVIEWS}/U100"
    assert answer.headers["ETag"] == '"1"'
    assert answer.json == {
        "product_id": PRODUCT,
        "user_id": "U100",
        "rating": 4,
        "title": "Nice",
        "text": "Good fit.",
        "created_at": answer.json["created_at"],
        "updated_at": answer.json["created_at"],
    }
    (item,) = stored_reviews()
    assert {"PK": item["PK"], "SK": item["SK"]} == keys.review(PRODUCT, "U100")
    assert item["version"] == 1


def test_someone_who_never_bought_the_product_gets_403_and_nothing_is_written(
    commerce_api: ApiClient, shop: None
) -> None:
    # given
    before = table_items()
    # when
    answer = commerce_api.post(REVIEWS, review_body())
    # then
    assert answer.status == 403
    assert answer.content_type == "application/problem+json"
    assert answer.json["type"] == "https://shopfeed.dev/problems/purchase-required"
    assert answer.json["product_id"] == PRODUCT
    assert table_items() == before


def test_a_buyer_whose_only_paid_order_was_cancelled_may_not_review(commerce_api: ApiClient, shop: None) -> None:
    # given: paid once, then the Paid order was cancelled (payments take the purchase back)
    record_purchase("U100", PRODUCT)
    record_purchase("U100", PRODUCT, orders=-1)
    # when
    answer = commerce_api.post(REVIEWS, review_body())
    # then
    assert answer.status == 403
    assert stored_reviews() == []


def test_a_purchase_of_another_product_does_not_let_you_review_this_one(commerce_api: ApiClient, shop: None) -> None:
    # given
    record_purchase("U100", "P-BLK-CAP")
    # when
    answer = commerce_api.post(REVIEWS, review_body())
    # then
    assert answer.status == 403


def test_a_second_review_of_the_same_product_is_409_and_leaves_the_first(commerce_api: ApiClient, shop: None) -> None:
    # given
    first = reviewed(commerce_api, PRODUCT, rating=5, title="First")
    # when
    with dynamodb_calls() as calls:
        second = commerce_api.post(REVIEWS, review_body(rating=1, title="Second"))
    # then
    assert second.status == 409
    assert second.json["type"] == "https://shopfeed.dev/problems/already-exists"
    assert (second.json["resource"], second.json["id"]) == ("review", f"{PRODUCT}/U100")
    assert calls.operations == ["TransactWriteItems"]
    assert commerce_api.get(f"{REVIEWS}/me").json == first


def test_a_review_stays_when_its_purchase_is_cancelled_and_a_second_one_is_still_409(
    commerce_api: ApiClient, shop: None
) -> None:
    # given
    reviewed(commerce_api, PRODUCT)
    record_purchase("U100", PRODUCT, orders=-1)
    # when
    again = commerce_api.post(REVIEWS, review_body())
    # then
    assert again.status == 409
    assert commerce_api.get(f"{REVIEWS}/me").status == 200


@pytest.mark.parametrize(
    "body",
    [
        {"rating": True, "title": "t"},
        {"rating": "5", "title": "t"},
        {"rating": 4.5, "title": "t"},
        {"rating": 0, "title": "t"},
        {"rating": 6, "title": "t"},
        {"rating": None, "title": "t"},
        {"title": "t"},
        {"rating": 5},
        {"rating": 5, "title": "   "},
        {"rating": 5, "title": "t" * 121},
        {"rating": 5, "title": "t", "text": "x" * 4001},
        {"rating": 5, "title": "t", "stars": 5},
    ],
    ids=[
        "true",
        "string",
        "fraction",
        "zero",
        "six",
        "null",
        "no-rating",
        "no-title",
        "blank-title",
        "long-title",
        "long-text",
        "unknown-field",
    ],
)
def test_a_review_that_breaks_the_schema_is_422_and_writes_nothing(
    commerce_api: ApiClient, shop: None, body: dict[str, Any]
) -> None:
    # given a buyer, and what the table holds
    record_purchase("U100", PRODUCT)
    before = table_items()
    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.post(REVIEWS, body)
    # then
    assert answer.status == 422, answer.text
    assert answer.json["type"] == "https://shopfeed.dev/problems/validation"
    assert calls.operations == []
    assert table_items() == before


def test_a_whole_number_written_as_a_json_float_is_that_rating(commerce_api: ApiClient, shop: None) -> None:
    # given
    record_purchase("U100", PRODUCT)
    # when
    answer = commerce_api.post(REVIEWS, {"rating": 4.0, "title": "Four"})
    # then
    assert answer.status == 201
    assert answer.json["rating"] == 4


@pytest.mark.parametrize(
    "subject",
    ["auth0|5f7c8ec7c33c6c004bbafe82", "a#b%23c", "🦆" * 63 + "a#%", "#" * 255],
    ids=["provider-prefixed", "hash-and-percent", "255-bytes-of-four-byte-characters", "255-hashes"],
)
def test_any_token_subject_reviews_and_finds_its_review(commerce_api: ApiClient, shop: None, subject: str) -> None:
    # given
    author = buyer(commerce_api, subject)
    # when
    written = author.post(REVIEWS, review_body())
    # then
    assert written.status == 201, written.text
    assert written.headers["Location"] == f"{REVIEWS}/{quote(subject, safe='')}"
    assert author.get(f"{REVIEWS}/me").json["user_id"] == subject
    assert [r["user_id"] for r in author.get("/users/me/reviews").json["items"]] == [subject]
    assert [r["user_id"] for r in author.get(REVIEWS).json["items"]] == [subject]


# -- reading one, editing, deleting ----------------------------------------------------------------


def test_anyone_reads_a_review_with_its_etag_in_one_strong_get(commerce_api: ApiClient, shop: None) -> None:
    # given
    written = reviewed(commerce_api, PRODUCT)
    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.as_user("U200").get(f"{REVIEWS}/U100")
    # then
    assert answer.status == 200
    assert answer.json == written
    assert answer.headers["ETag"] == '"1"'
    assert calls.operations == ["GetItem"]


def test_a_review_that_does_not_exist_is_404(commerce_api: ApiClient, shop: None) -> None:
    assert commerce_api.get(f"{REVIEWS}/U999").status == 404
    assert commerce_api.get(f"{REVIEWS}/me").status == 404


def test_the_author_edits_their_review_with_if_match_in_two_round_trips(
    commerce_api: ApiClient, shop: None, clock: SteppingClock
) -> None:
    # given
    written = reviewed(commerce_api, PRODUCT, rating=2, title="Meh")
    # when
    with dynamodb_calls() as calls:
        edited = commerce_api.put(
            f"{REVIEWS}/me",
            review_body(rating=5, title="Grew on me", text="Better after a wash."),
            headers=if_match('"1"'),
        )
    # then
    assert edited.status == 200, edited.text
    assert edited.headers["ETag"] == '"2"'
    assert edited.json == {
        **written,
        "rating": 5,
        "title": "Grew on me",
        "text": "Better after a wash.",
        "updated_at": edited.json["updated_at"],
    }
    assert edited.json["updated_at"] > written["created_at"]
    assert calls.operations == ["GetItem", "UpdateItem"]
    assert commerce_api.get(f"{REVIEWS}/me").headers["ETag"] == '"2"'


def test_an_edit_without_if_match_is_428_and_a_stale_one_412_and_neither_writes(
    commerce_api: ApiClient, shop: None
) -> None:
    # given
    reviewed(commerce_api, PRODUCT, rating=3)
    assert commerce_api.put(f"{REVIEWS}/me", review_body(rating=4), headers=if_match('"1"')).status == 200
    before = stored_reviews()
    # when
    missing = commerce_api.put(f"{REVIEWS}/me", review_body(rating=1))
    stale = commerce_api.put(f"{REVIEWS}/me", review_body(rating=1), headers=if_match('"1"'))
    # then
    assert missing.status == 428
    assert missing.json["type"] == "https://shopfeed.dev/problems/precondition-required"
    assert stale.status == 412
    assert stale.json["current_version"] == 2
    assert stored_reviews() == before


def test_editing_a_review_you_never_wrote_is_404(commerce_api: ApiClient, shop: None) -> None:
    # given someone else's review
    reviewed(commerce_api.as_user("U200"), PRODUCT)
    # when
    answer = commerce_api.put(f"{REVIEWS}/me", review_body(), headers=if_match('"1"'))
    # then
    assert answer.status == 404


def test_an_edit_refused_by_the_schema_is_422_and_changes_nothing(commerce_api: ApiClient, shop: None) -> None:
    # given
    reviewed(commerce_api, PRODUCT)
    before = stored_reviews()
    # when
    answer = commerce_api.put(f"{REVIEWS}/me", {"rating": "5", "title": "x"}, headers=if_match('"1"'))
    # then
    assert answer.status == 422
    assert stored_reviews() == before


def test_the_author_deletes_their_review_in_one_round_trip_and_may_review_again(
    commerce_api: ApiClient, shop: None
) -> None:
    # given
    reviewed(commerce_api, PRODUCT)
    # when
    with dynamodb_calls() as calls:
        deleted = commerce_api.delete(f"{REVIEWS}/me")
    again = commerce_api.delete(f"{REVIEWS}/me")
    # then
    assert (deleted.status, again.status) == (204, 204)
    assert calls.operations == ["DeleteItem"]
    assert commerce_api.get(f"{REVIEWS}/me").status == 404
    assert commerce_api.post(REVIEWS, review_body(title="Second thoughts")).status == 201


def test_deleting_is_only_ever_of_your_own_review(commerce_api: ApiClient, shop: None) -> None:
    # given
    reviewed(commerce_api, PRODUCT)
    # when someone else deletes "their" review of the product
    answer = commerce_api.as_user("U200").delete(f"{REVIEWS}/me")
    # then
    assert answer.status == 204
    assert commerce_api.get(f"{REVIEWS}/U100").status == 200


# -- lists -----------------------------------------------------------------------------------------


@pytest.fixture
def five_reviews(commerce_api: ApiClient, shop: None, clock: SteppingClock) -> list[tuple[str, int]]:
    """Five users review the product one after another: (user, rating). Their ids do not sort in the
    order they wrote, so only the review's time can put ties in order."""
    written = [("U3", 4), ("U5", 5), ("U1", 4), ("U4", 2), ("U2", 5)]
    for user, rating in written:
        reviewed(commerce_api.as_user(user), PRODUCT, rating=rating)
    return written


def listed(api: ApiClient, path: str, **query: Any) -> list[list[tuple[str, int]]]:
    return [[(r["user_id"], r["rating"]) for r in page["items"]] for page in pages(api, path, **query)]


def test_a_products_reviews_newest_first_page_by_page_one_query_each(
    commerce_api: ApiClient, five_reviews: list[tuple[str, int]]
) -> None:
    # when
    with dynamodb_calls() as calls:
        got = listed(commerce_api, REVIEWS, limit=2)
    # then
    assert got == [[("U2", 5), ("U4", 2)], [("U1", 4), ("U5", 5)], [("U3", 4)]]
    assert calls.operations == ["Query"] * 3


def test_a_products_reviews_best_first_ties_newest_first(
    commerce_api: ApiClient, five_reviews: list[tuple[str, int]]
) -> None:
    # when
    with dynamodb_calls() as calls:
        got = listed(commerce_api, REVIEWS, sort="rating", limit=2)
    # then
    assert got == [[("U2", 5), ("U5", 5)], [("U1", 4), ("U3", 4)], [("U4", 2)]]
    assert calls.operations == ["Query"] * 3


def test_the_default_page_is_fifty_newest_first_and_the_last_page_has_no_cursor(
    commerce_api: ApiClient, five_reviews: list[tuple[str, int]]
) -> None:
    # when
    answer = commerce_api.get(REVIEWS)
    # then
    assert [r["user_id"] for r in answer.json["items"]] == ["U2", "U4", "U1", "U5", "U3"]
    assert answer.json["next_cursor"] is None


def test_an_edited_rating_moves_its_review_in_the_rating_order_but_not_in_the_recent_one(
    commerce_api: ApiClient, five_reviews: list[tuple[str, int]]
) -> None:
    # when U4 raises 2 to 5
    edited = commerce_api.as_user("U4").put(f"{REVIEWS}/me", review_body(rating=5), headers=if_match('"1"'))
    # then
    assert edited.status == 200
    assert listed(commerce_api, REVIEWS, sort="rating") == [[("U2", 5), ("U4", 5), ("U5", 5), ("U1", 4), ("U3", 4)]]
    assert listed(commerce_api, REVIEWS) == [[("U2", 5), ("U4", 5), ("U1", 4), ("U5", 5), ("U3", 4)]]


def test_a_deleted_review_leaves_every_list(commerce_api: ApiClient, five_reviews: list[tuple[str, int]]) -> None:
    # when
    commerce_api.as_user("U5").delete(f"{REVIEWS}/me")
    # then
    assert [user for user, _ in listed(commerce_api, REVIEWS, sort="rating")[0]] == ["U2", "U1", "U3", "U4"]
    assert [user for user, _ in listed(commerce_api, REVIEWS)[0]] == ["U2", "U4", "U1", "U3"]
    assert commerce_api.get("/users/U5/reviews").json["items"] == []


def test_a_users_reviews_newest_first_across_products_one_query_a_page(
    commerce_api: ApiClient, shop: None, clock: SteppingClock
) -> None:
    # given
    ada = commerce_api.as_user("U100")
    for product_id in ("P-BLK-CAP", PRODUCT):
        reviewed(ada, product_id)
    reviewed(commerce_api.as_user("U200"), PRODUCT)
    # when
    with dynamodb_calls() as calls:
        mine = [[r["product_id"] for r in page["items"]] for page in pages(ada, "/users/U100/reviews", limit=1)]
    # then
    assert mine == [[PRODUCT], ["P-BLK-CAP"]]
    assert calls.operations == ["Query"] * 2
    assert ada.get("/users/me/reviews").json["items"] == ada.get("/users/U100/reviews").json["items"]


def test_a_cursor_is_bound_to_its_product_order_and_user(
    commerce_api: ApiClient, five_reviews: list[tuple[str, int]]
) -> None:
    # given
    recent = commerce_api.get(REVIEWS, query={"limit": 1}).json["next_cursor"]
    # then
    assert commerce_api.get(REVIEWS, query={"sort": "rating", "cursor": recent}).status == 400
    assert commerce_api.get("/products/P-BLK-CAP/reviews", query={"cursor": recent}).status == 400
    assert commerce_api.get("/users/U1/reviews", query={"cursor": recent}).status == 400
    assert commerce_api.get(REVIEWS, query={"cursor": recent[:-2]}).status == 400


@pytest.mark.parametrize(
    "query", [{"sort": "best"}, {"limit": 0}, {"limit": 201}, {"limit": "ten"}], ids=["sort", "zero", "over", "text"]
)
def test_a_list_query_out_of_bounds_is_422(commerce_api: ApiClient, shop: None, query: dict[str, Any]) -> None:
    assert commerce_api.get(REVIEWS, query=query).status == 422


def test_a_product_without_reviews_lists_none(commerce_api: ApiClient, shop: None) -> None:
    assert commerce_api.get("/products/P-NOBODY-SELLS/reviews").json == {"items": [], "next_cursor": None}


# -- the edit's guard, below the API -----------------------------------------------------------------


def test_an_edit_of_a_review_changed_since_it_was_read_is_refused(commerce_api: ApiClient, shop: None) -> None:
    # given the review as an edit read it, then another edit of the author
    reviewed(commerce_api, PRODUCT, rating=3)
    store = bootstrap.reviews()
    read = store.get(PRODUCT, "U100")
    assert read is not None
    assert commerce_api.put(f"{REVIEWS}/me", review_body(rating=4), headers=if_match('"1"')).status == 200
    # when the first edit writes
    with pytest.raises(StaleVersion) as refused:
        store.update(read, read.model_copy(update={"rating": 1, "version": 2}))
    # then
    assert refused.value.current_version == 2
    assert commerce_api.get(f"{REVIEWS}/me").json["rating"] == 4


def test_an_edit_of_a_review_deleted_and_written_again_since_it_was_read_is_refused(
    commerce_api: ApiClient, shop: None, clock: SteppingClock
) -> None:
    # given the review as an edit read it, then deleted and written again: version 1 again, a new time
    reviewed(commerce_api, PRODUCT, rating=3)
    store = bootstrap.reviews()
    read = store.get(PRODUCT, "U100")
    assert read is not None
    commerce_api.delete(f"{REVIEWS}/me")
    assert commerce_api.post(REVIEWS, review_body(rating=5)).status == 201
    # when the edit writes
    with pytest.raises(StaleVersion):
        store.update(read, read.model_copy(update={"rating": 1, "version": 2}))
    # then the new review keeps its rating and its place in the rating order
    assert commerce_api.get(f"{REVIEWS}/me").json["rating"] == 5
    (item,) = stored_reviews()
    assert item[keys.TOP_REVIEWS_BY_PRODUCT.sort_key].startswith(f"5#{item['created_at']}#")
