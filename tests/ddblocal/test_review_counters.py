"""Review races on DynamoDB Local, one container per request, then the CommerceTable stream delivered
to its consumer as the template's event source mapping does: the product's counters end exact."""

import math

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, record_purchase, review_body
from local.harness.feed_stream import deliver_all
from local.harness.race import Call, all_at_once
from shopfeed.commerce import items, keys
from tests.ddblocal.conftest import StoredItems
from tests.support.calls import dynamodb_calls
from tests.support.commerce_stream import commerce_stream_poller

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

PRODUCT = "P-POPULAR"
BUYERS = [f"U{n:03d}" for n in range(1, 41)]


def rating_of(n: int) -> int:
    return 1 + n % 5


def counters(stored: StoredItems) -> tuple[int, int]:
    product = stored.get(keys.product(PRODUCT))
    return product.get(items.RATING_COUNT, 0), product.get(items.RATING_SUM, 0)


def test_forty_buyers_reviewing_one_product_at_once_are_counted_exactly_once_each(
    admin: ApiClient, stored: StoredItems, tables: dict[str, str]
) -> None:
    # given
    create_product(admin, PRODUCT)
    for buyer in BUYERS:
        record_purchase(buyer, PRODUCT, table=tables["CommerceTable"])
    reviews = [
        Call("POST", f"/products/{PRODUCT}/reviews", review_body(rating=rating_of(n)), sub=buyer)
        for n, buyer in enumerate(BUYERS)
    ]
    poller = commerce_stream_poller(tables["CommerceTable"])
    # when
    answers = all_at_once(reviews, warm_up=Call("GET", f"/products/{PRODUCT}"))
    with dynamodb_calls() as calls:
        deliver_all(poller)
    # then
    assert [a.status for a in answers] == [201] * len(BUYERS), [a.text for a in answers if a.status != 201]
    # at most one counter write per batch of the mapping's size (one product), for 40 reviews
    batches = math.ceil((len(BUYERS) + 1) / poller.settings.batch_size)  # the product's INSERT comes first
    assert 1 <= calls.counts()["TransactWriteItems"] <= batches < len(BUYERS)
    assert len(stored.of(items.REVIEW, product_id=PRODUCT)) == len(BUYERS)
    assert counters(stored) == (len(BUYERS), sum(rating_of(n) for n in range(len(BUYERS))))
    assert admin.get(f"/products/{PRODUCT}").json["rating"]["count"] == len(BUYERS)


def test_twenty_identical_reviews_at_once_make_one_review_counted_once(
    admin: ApiClient, stored: StoredItems, tables: dict[str, str]
) -> None:
    # given
    create_product(admin, PRODUCT)
    record_purchase("U001", PRODUCT, table=tables["CommerceTable"])
    same = Call("POST", f"/products/{PRODUCT}/reviews", review_body(rating=4), sub="U001")
    # when
    answers = all_at_once([same] * 20, warm_up=Call("GET", f"/products/{PRODUCT}", sub="U001"))
    deliver_all(commerce_stream_poller(tables["CommerceTable"]))
    # then
    assert sorted(a.status for a in answers) == [201] + [409] * 19, [a.text for a in answers]
    assert len(stored.of(items.REVIEW, product_id=PRODUCT)) == 1
    assert counters(stored) == (1, 4)


def test_buyers_and_non_buyers_racing_leave_only_the_buyers_reviews(
    admin: ApiClient, stored: StoredItems, tables: dict[str, str]
) -> None:
    # given ten buyers and ten who never paid
    create_product(admin, PRODUCT)
    buyers, strangers = BUYERS[:10], [f"U-STRANGER-{n}" for n in range(10)]
    for buyer in buyers:
        record_purchase(buyer, PRODUCT, table=tables["CommerceTable"])
    calls = [Call("POST", f"/products/{PRODUCT}/reviews", review_body(rating=5), sub=sub) for sub in buyers + strangers]
    # when
    answers = all_at_once(calls, warm_up=Call("GET", f"/products/{PRODUCT}"))
    deliver_all(commerce_stream_poller(tables["CommerceTable"]))
    # then
    assert [a.status for a in answers] == [201] * 10 + [403] * 10
    assert sorted(r["user_id"] for r in stored.of(items.REVIEW)) == sorted(buyers)
    assert counters(stored) == (10, 50)
