"""Reviews without AWS: their keys and orders, the stored item, the strict rating, what a review record
counts on its product, and the average a product shows."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from pydantic import ValidationError

from local.harness.builders import product
from shopfeed.commerce import items, keys
from shopfeed.commerce.models import Product, RatingTotals, Review
from shopfeed.commerce.reviews import ratings
from shopfeed.commerce.reviews.schemas import WriteReview
from shopfeed.commerce.schemas import ProductView, RatingView
from shopfeed.platform import dynamo
from shopfeed.platform.counters import Increment
from shopfeed.platform.streams import ChangeKind, ItemChange

AT = datetime(2026, 11, 22, 10, tzinfo=UTC)
SHIRT = keys.product("P-RED-TSHIRT")


def review(user_id: str = "U100", rating: int = 4, created_at: str = "2026-11-22T10:00:00.000Z") -> Review:
    return Review(
        product_id="P-RED-TSHIRT",
        user_id=user_id,
        rating=rating,
        title="Soft",
        text="True to size.",
        created_at=created_at,
        updated_at=created_at,
        version=1,
    )


def change(kind: ChangeKind, new: Review | None, old: Review | None = None) -> ItemChange:
    new_image = items.review_item(new) if new else None
    old_image = items.review_item(old) if old else None
    image = new_image or old_image or {}
    return ItemChange("1", kind, {"PK": image["PK"], "SK": image["SK"]}, new_image, old_image, AT)


# -- keys ------------------------------------------------------------------------------------------


def test_a_review_is_keyed_by_its_product_and_its_author() -> None:
    assert keys.review("P-RED-TSHIRT", "U100") == {"PK": "PRODUCT#P-RED-TSHIRT", "SK": "REVIEW#U100"}
    assert keys.review("P-RED-TSHIRT", "U100")["PK"] == keys.product("P-RED-TSHIRT")["PK"]


def test_a_subject_cannot_spell_another_review_key() -> None:
    # given two subjects that would meet if # were left as it is
    one, other = keys.review("P-A", "a#b"), keys.review("P-A", "a%23b")
    # then
    assert one != other
    assert "#" not in one["SK"].removeprefix(keys.REVIEW)


def test_the_rating_order_puts_the_best_first_and_ties_newest_first_when_read_descending() -> None:
    # given
    written = [
        review("U1", 4, "2026-11-22T10:00:00.000Z"),
        review("U2", 5, "2026-11-22T09:00:00.000Z"),
        review("U3", 4, "2026-11-22T11:00:00.000Z"),
        review("U4", 1, "2026-11-22T12:00:00.000Z"),
    ]
    # when
    top = sorted(written, key=lambda r: items.review_item(r)[keys.TOP_REVIEWS_BY_PRODUCT.sort_key], reverse=True)
    # then
    assert [r.user_id for r in top] == ["U2", "U3", "U1", "U4"]


def test_both_product_orders_share_the_products_partition_and_the_user_order_the_users() -> None:
    # when
    item = items.review_item(review())
    # then
    assert item[keys.RECENT_REVIEWS_BY_PRODUCT.partition_key] == keys.review_partition("P-RED-TSHIRT")
    assert keys.RECENT_REVIEWS_BY_PRODUCT.partition_key == keys.TOP_REVIEWS_BY_PRODUCT.partition_key
    assert item[keys.REVIEWS_BY_USER.partition_key] == keys.user_reviews_partition("U100") == keys.user("U100")["PK"]
    assert item[keys.REVIEWS_BY_USER.sort_key] == "2026-11-22T10:00:00.000Z#P-RED-TSHIRT"


def test_an_edit_moves_only_the_rating_orders_key() -> None:
    # given
    before, after = items.review_item(review(rating=2)), items.review_item(review(rating=5))
    # then
    moved = {name for name in after if after[name] != before[name]}
    assert moved == {"rating", keys.TOP_REVIEWS_BY_PRODUCT.sort_key}
    # and the edit's update takes the new key from the declarations (the other keys it rewrites as they were)
    edit = dynamo.reindexed(keys.INDEXES, after, dynamo.Update(set={"rating": 5}))
    assert {name: value for name, value in edit.set.items() if before.get(name) != value} == {
        "rating": 5,
        keys.TOP_REVIEWS_BY_PRODUCT.sort_key: after[keys.TOP_REVIEWS_BY_PRODUCT.sort_key],
    }


# -- the stored item and the request ---------------------------------------------------------------


def test_a_review_round_trips_through_its_item_and_its_list_row() -> None:
    # given
    written = review()
    # when
    item = dynamo.deserialize(dynamo.serialize(items.review_item(written)))
    # then
    assert item["entity_type"] == items.REVIEW
    assert items.review_from(item) == written
    assert items.review_summary_from({k: item[k] for k in keys.REVIEW_SUMMARY_ATTRIBUTES}).title == "Soft"
    assert "version" not in keys.REVIEW_SUMMARY_ATTRIBUTES


@pytest.mark.parametrize("rating", [True, False, "5", 4.5, 0, 6, -1, None])
def test_a_rating_is_a_strict_integer_from_one_to_five(rating: object) -> None:
    with pytest.raises(ValidationError):
        WriteReview.model_validate({"rating": rating, "title": "t"})


def test_a_whole_json_float_is_its_integer_rating_and_the_text_is_optional() -> None:
    assert WriteReview.model_validate({"rating": 5.0, "title": " Great "}) == WriteReview(
        rating=5, title="Great", text=""
    )


# -- what a record counts --------------------------------------------------------------------------


def test_a_new_review_counts_one_and_its_rating_on_its_product() -> None:
    assert ratings.counted(change(ChangeKind.INSERT, review(rating=4))) == [
        Increment(SHIRT, items.RATING_COUNT, 1),
        Increment(SHIRT, items.RATING_SUM, 4),
    ]


def test_a_changed_rating_moves_the_sum_by_the_difference() -> None:
    assert ratings.counted(change(ChangeKind.MODIFY, review(rating=5), review(rating=2))) == [
        Increment(SHIRT, items.RATING_SUM, 3)
    ]
    assert ratings.counted(change(ChangeKind.MODIFY, review(rating=1), review(rating=4))) == [
        Increment(SHIRT, items.RATING_SUM, -3)
    ]


def test_an_edit_that_keeps_the_rating_counts_nothing() -> None:
    kept = review(rating=3).model_copy(update={"title": "Changed my words", "version": 2})
    assert ratings.counted(change(ChangeKind.MODIFY, kept, review(rating=3))) == []


def test_a_removed_review_takes_its_count_and_rating_back_from_its_old_image() -> None:
    assert ratings.counted(change(ChangeKind.REMOVE, None, review(rating=4))) == [
        Increment(SHIRT, items.RATING_COUNT, -1),
        Increment(SHIRT, items.RATING_SUM, -4),
    ]


def test_a_record_of_another_type_counts_nothing() -> None:
    shirt = items.product_item(product("P-RED-TSHIRT"))
    assert ratings.counted(ItemChange("1", ChangeKind.INSERT, SHIRT, shirt, None, AT)) == []


def test_an_unreadable_review_image_raises_so_its_record_fails_alone() -> None:
    # given
    broken = {k: v for k, v in items.review_item(review()).items() if k != "rating"}
    # then
    with pytest.raises((KeyError, ValueError)):
        ratings.counted(ItemChange("1", ChangeKind.INSERT, SHIRT, broken, None, AT))


# -- what a product shows --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "total", "average"),
    [(0, 0, None), (1, 4, "4.0"), (4, 17, "4.3"), (3, 13, "4.3"), (3, 10, "3.3"), (6, 25, "4.2"), (8, 21, "2.6")],
)
def test_the_average_has_one_decimal_halves_rounded_up(count: int, total: int, average: str | None) -> None:
    expected = Decimal(average) if average is not None else None
    assert RatingTotals(count=count, sum=total).average == expected


def test_a_product_without_reviews_shows_a_count_of_zero_and_no_average() -> None:
    # given a product item as written, without counters
    item = items.product_item(product("P-RED-TSHIRT"))
    # when
    shown = ProductView.of(items.product_from(item)).model_dump(mode="json")
    # then
    assert items.RATING_COUNT not in item
    assert shown["rating"] == {"count": 0, "average": None}


def test_a_products_stored_counters_map_to_its_rating_and_never_into_its_item() -> None:
    # given
    item = {**items.product_item(product("P-RED-TSHIRT")), items.RATING_COUNT: 4, items.RATING_SUM: 17}
    # when
    read: Product = items.product_from(item)
    # then
    assert read.rating == RatingTotals(count=4, sum=17)
    assert RatingView.of(read.rating) == RatingView(count=4, average=4.3)
    assert items.RATING_COUNT not in items.product_item(read)
