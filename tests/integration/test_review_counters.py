"""Product rating counters, kept by the CommerceTable stream consumer from real stream records (moto,
filtered as the template's mapping filters them): exact when Lambda delivers a batch twice or again
from a failed record, and one counter write per product per batch."""

from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from functions.commerce_stream.app import lambda_handler
from local.harness.apigw import sample
from local.harness.client import ApiClient
from local.harness.factories import create_product, if_match, record_purchase, review_body, reviewed
from local.harness.tables import table_items
from shopfeed.commerce import items, keys
from shopfeed.commerce.catalog.search import PRODUCT_PROJECTION
from shopfeed.platform import clients, dynamo, exactly_once, streams
from shopfeed.platform.search.sync import queue_writes
from tests.integration.outbox_support import (
    STREAM_FUNCTION,
    CommerceStream,
    batch,
    failed_sequence_numbers,
    redelivery,
    sequence_numbers,
)
from tests.support.calls import dynamodb_calls
from tests.support.commerce_stream import routed
from tests.unit.search_fakes import InMemoryWrites

PRODUCTS = ("P-RED-TSHIRT", "P-BLK-CAP", "P-GRN-SOCKS")


@pytest.fixture
def shop(admin: ApiClient, stream: CommerceStream) -> CommerceStream:
    """Three products; the stream read from here on."""
    for product_id in PRODUCTS:
        create_product(admin, product_id, category="apparel")
    stream.read()
    return stream


def consume(records: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(lambda_handler(batch(records), STREAM_FUNCTION))


def counters(product_id: str) -> tuple[int, int]:
    """``(rating_count, rating_sum)`` as stored on the product."""
    item = clients.dynamodb().get_item(
        TableName="CommerceTable", Key=dynamo.serialize(keys.product(product_id)), ConsistentRead=True
    )["Item"]
    stored = dynamo.deserialize(item)
    return stored.get(items.RATING_COUNT, 0), stored.get(items.RATING_SUM, 0)


def review_as(api: ApiClient, user_id: str, product_id: str, rating: int) -> None:
    reviewed(api.as_user(user_id), product_id, rating=rating)


def edit(api: ApiClient, user_id: str, product_id: str, rating: int) -> None:
    me = f"/products/{product_id}/reviews/me"
    etag = api.as_user(user_id).get(me).headers["ETag"]
    assert api.as_user(user_id).put(me, review_body(rating=rating), headers=if_match(etag)).status == 200


def delete(api: ApiClient, user_id: str, product_id: str) -> None:
    assert api.as_user(user_id).delete(f"/products/{product_id}/reviews/me").status == 204


def test_new_reviews_count_on_their_products_and_the_product_shows_the_average(
    commerce_api: ApiClient, shop: CommerceStream
) -> None:
    # given 5, 4, 4, 4 on one product (17 / 4 = 4.25) and a 3 on another
    for user, rating in (("U1", 5), ("U2", 4), ("U3", 4), ("U4", 4)):
        review_as(commerce_api, user, "P-RED-TSHIRT", rating)
    review_as(commerce_api, "U1", "P-BLK-CAP", 3)
    # when
    response = consume(routed(shop.read()))
    # then
    assert response == {"batchItemFailures": []}
    assert counters("P-RED-TSHIRT") == (4, 17)
    assert counters("P-BLK-CAP") == (1, 3)
    assert commerce_api.get("/products/P-RED-TSHIRT").json["rating"] == {"count": 4, "average": 4.3}
    assert commerce_api.get("/products/P-BLK-CAP").json["rating"] == {"count": 1, "average": 3.0}
    assert commerce_api.get("/products/P-GRN-SOCKS").json["rating"] == {"count": 0, "average": None}


def test_an_edited_rating_moves_the_sum_and_a_deleted_review_takes_its_count_back(
    commerce_api: ApiClient, shop: CommerceStream
) -> None:
    # given
    review_as(commerce_api, "U1", "P-RED-TSHIRT", 2)
    review_as(commerce_api, "U2", "P-RED-TSHIRT", 4)
    consume(routed(shop.read()))
    # when U1 raises 2 to 5 and U2 deletes theirs
    edit(commerce_api, "U1", "P-RED-TSHIRT", 5)
    delete(commerce_api, "U2", "P-RED-TSHIRT")
    response = consume(routed(shop.read()))
    # then
    assert response == {"batchItemFailures": []}
    assert counters("P-RED-TSHIRT") == (1, 5)


def test_every_batch_delivered_twice_counts_each_review_once(commerce_api: ApiClient, shop: CommerceStream) -> None:
    # given two batches: three reviews, then an edit, a deletion and a new review
    review_as(commerce_api, "U1", "P-RED-TSHIRT", 5)
    review_as(commerce_api, "U2", "P-RED-TSHIRT", 3)
    review_as(commerce_api, "U3", "P-BLK-CAP", 4)
    first = routed(shop.read())
    edit(commerce_api, "U2", "P-RED-TSHIRT", 1)
    delete(commerce_api, "U3", "P-BLK-CAP")
    review_as(commerce_api, "U4", "P-BLK-CAP", 2)
    second = routed(shop.read())
    # when each is delivered twice, the second one also interleaved with the first's repeat
    for records in (first, first, second, first, second):
        assert consume(records) == {"batchItemFailures": []}
    # then
    assert counters("P-RED-TSHIRT") == (2, 6)
    assert counters("P-BLK-CAP") == (1, 2)


def test_a_retry_from_a_failed_record_counts_the_records_after_it_once(
    commerce_api: ApiClient, admin: ApiClient, shop: CommerceStream
) -> None:
    # given a batch whose second review is of a product not in the catalog yet (its counter write is
    # refused), with reviews of other products before and after it
    review_as(commerce_api, "U1", "P-RED-TSHIRT", 5)
    review_as(commerce_api, "U2", "P-NEW-HAT", 4)
    review_as(commerce_api, "U3", "P-RED-TSHIRT", 3)
    review_as(commerce_api, "U4", "P-BLK-CAP", 2)
    records = routed(shop.read())
    first = consume(records)
    assert failed_sequence_numbers(first) == [sequence_numbers(records)[1]]
    # when the product arrives and Lambda delivers again from the failed record on, as a partial
    # batch response asks
    create_product(admin, "P-NEW-HAT")
    retried = redelivery(records, first)
    second = consume(retried)
    # then
    assert sequence_numbers(retried) == sequence_numbers(records)[1:]
    assert second == {"batchItemFailures": []}
    assert counters("P-RED-TSHIRT") == (2, 8)
    assert counters("P-NEW-HAT") == (1, 4)
    assert counters("P-BLK-CAP") == (1, 2)


def test_a_review_of_a_product_that_does_not_exist_fails_its_record_however_often_it_comes(
    commerce_api: ApiClient, shop: CommerceStream
) -> None:
    # given
    review_as(commerce_api, "U1", "P-NOT-SOLD", 5)
    review_as(commerce_api, "U2", "P-RED-TSHIRT", 4)
    records = routed(shop.read())
    # when it is delivered, then retried twice (it reaches the DLQ once its retries are used up)
    responses = [consume(records), consume(records), consume(records)]
    # then it fails each time, creates no product, and the other review is counted once
    assert responses == [{"batchItemFailures": [{"itemIdentifier": sequence_numbers(records)[0]}]}] * 3
    assert not [i for i in table_items() if i.get("PK") == keys.product("P-NOT-SOLD")["PK"] and i["SK"] == keys.META]
    assert counters("P-RED-TSHIRT") == (1, 4)


def test_a_review_and_its_deletion_in_one_batch_stay_exact_when_only_the_deletion_comes_again(
    commerce_api: ApiClient, shop: CommerceStream
) -> None:
    # given a batch where they cancel out
    review_as(commerce_api, "U1", "P-RED-TSHIRT", 4)
    delete(commerce_api, "U1", "P-RED-TSHIRT")
    records = routed(shop.read())
    assert consume(records) == {"batchItemFailures": []}
    # when only the deletion is delivered again (a retry from it on)
    consume(records[1:])
    # then
    assert counters("P-RED-TSHIRT") == (0, 0)


def test_a_batch_writes_each_reviewed_product_once_however_many_reviews_it_holds(
    commerce_api: ApiClient, shop: CommerceStream
) -> None:
    # given 12 review records on 3 products: 10 new reviews, an edited rating, a deletion
    for n in range(1, 7):
        review_as(commerce_api, f"U{n}", "P-RED-TSHIRT", 1 + n % 5)
    for n in range(1, 4):
        review_as(commerce_api, f"U{n}", "P-BLK-CAP", 5)
    review_as(commerce_api, "U1", "P-GRN-SOCKS", 2)
    edit(commerce_api, "U1", "P-GRN-SOCKS", 3)
    delete(commerce_api, "U3", "P-BLK-CAP")
    records = routed(shop.read())
    # when
    with dynamodb_calls() as calls:
        response = consume(records)
    # then one counter write (a transaction with its applied set) per distinct product, nothing read
    assert response == {"batchItemFailures": []}
    assert len(records) == 12
    assert calls.counts() == {"TransactWriteItems": 3}
    assert counters("P-RED-TSHIRT") == (6, sum(1 + n % 5 for n in range(1, 7)))
    assert counters("P-BLK-CAP") == (2, 10)
    assert counters("P-GRN-SOCKS") == (1, 3)


def test_a_title_or_text_edit_counts_nothing_and_writes_nothing(commerce_api: ApiClient, shop: CommerceStream) -> None:
    # given
    review_as(commerce_api, "U1", "P-RED-TSHIRT", 4)
    consume(routed(shop.read()))
    me = "/products/P-RED-TSHIRT/reviews/me"
    assert (
        commerce_api.as_user("U1").put(me, review_body(rating=4, title="Still 4"), headers=if_match('"1"')).status
        == 200
    )
    records = routed(shop.read())
    # when
    with dynamodb_calls() as calls:
        response = consume(records)
    # then (the first count's own product MODIFY comes too: search sync queues nothing for it)
    assert [(_entity(r), r["eventName"]) for r in records] == [(items.PRODUCT, "MODIFY"), (items.REVIEW, "MODIFY")]
    assert response == {"batchItemFailures": []}
    assert calls.operations == []
    assert counters("P-RED-TSHIRT") == (1, 4)


def test_counting_leaves_the_products_etag_alone_and_its_counter_changes_index_nothing(
    commerce_api: ApiClient, shop: CommerceStream
) -> None:
    # given the catalog queued for search as it was created, then a review counted
    queue = InMemoryWrites()
    created = [c for c in _changes(routed(CommerceStream().read())) if c.entity_type == items.PRODUCT]
    assert queue_writes(created, PRODUCT_PROJECTION, queue) == {}
    assert len(queue.tasks) == len(PRODUCTS)
    review_as(commerce_api, "U1", "P-RED-TSHIRT", 5)
    consume(routed(shop.read()))
    # when the counter write's own record reaches the consumer (a Product MODIFY)
    counted = [c for c in _changes(routed(shop.read())) if c.entity_type == items.PRODUCT]
    failures = queue_writes(counted, PRODUCT_PROJECTION, queue)
    # then search sync queues nothing (its version did not move), and the product reads and lists as before
    assert [c.kind for c in counted] == [streams.ChangeKind.MODIFY]
    assert (failures, len(queue.tasks)) == ({}, len(PRODUCTS))
    answer = commerce_api.get("/products/P-RED-TSHIRT")
    assert answer.headers["ETag"] == '"1"'
    assert answer.json["rating"] == {"count": 1, "average": 5.0}
    listed = commerce_api.get("/products", query={"category": "apparel"}).json["items"]
    assert sorted(p["product_id"] for p in listed) == sorted(PRODUCTS)


def _changes(records: list[dict[str, Any]]) -> list[streams.ItemChange]:
    return [streams.parse(DynamoDBRecord(record)) for record in records]


def test_counted_records_leave_an_applied_set_that_expires(commerce_api: ApiClient, shop: CommerceStream) -> None:
    # given
    review_as(commerce_api, "U1", "P-RED-TSHIRT", 4)
    records = routed(shop.read())
    (change,) = _changes(records)
    # when
    consume(records)
    # then the product's set of the record's second holds the record
    sets = [item for item in table_items() if item.get("entity_type") == exactly_once.APPLIED_ENTITY_TYPE]
    key = keys.applied_records("PRODUCT#P-RED-TSHIRT|META", exactly_once.second_of(change))
    assert [(s["PK"], s["SK"], s[exactly_once.APPLIED]) for s in sets] == [
        (key["PK"], key["SK"], set(sequence_numbers(records)))
    ]
    assert all(s["expires_at"] > 0 for s in sets)


def test_the_sample_review_record_counts_on_its_product(admin: ApiClient, aws: None) -> None:
    # given the product the sample review is of
    create_product(admin, "P-RED-TSHIRT")
    # when
    answer = consume(sample("streams/commerce_review_inserted.json")["Records"])
    # then
    assert answer == {"batchItemFailures": []}
    assert counters("P-RED-TSHIRT") == (1, 4)


def test_the_filter_lets_in_review_records_of_every_kind_and_no_applied_sets(
    commerce_api: ApiClient, shop: CommerceStream
) -> None:
    # given a review written, edited and deleted, and its counting
    review_as(commerce_api, "U1", "P-RED-TSHIRT", 4)
    edit(commerce_api, "U1", "P-RED-TSHIRT", 2)
    delete(commerce_api, "U1", "P-RED-TSHIRT")
    record_purchase("U2", "P-RED-TSHIRT")
    everything = shop.read()
    consume(routed(everything))
    everything += shop.read()
    # when
    let_in = routed(everything)
    # then the review's three records and the counter write's product MODIFY; no applied set, no purchase
    kinds = [(_entity(r), r["eventName"]) for r in let_in]
    assert kinds == [
        (items.REVIEW, "INSERT"),
        (items.REVIEW, "MODIFY"),
        (items.REVIEW, "REMOVE"),
        (items.PRODUCT, "MODIFY"),
    ]
    assert {_entity(r) for r in everything} >= {items.PURCHASE, exactly_once.APPLIED_ENTITY_TYPE}


def _entity(record: dict[str, Any]) -> str:
    # moto streams an UpdateItem that creates an item as two INSERTs, the first with its key alone.
    image = record["dynamodb"].get("NewImage") or record["dynamodb"]["OldImage"]
    return str(image.get("entity_type", {}).get("S", ""))
