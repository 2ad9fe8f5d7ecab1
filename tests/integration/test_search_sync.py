"""Product search sync against moto's CommerceTable stream and each search engine: whatever order and
however often records arrive (and so their queued writes), the index ends exactly as the table."""

import pytest
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from local.harness.client import ApiClient
from local.harness.factories import create_product
from local.harness.tables import table_items
from shopfeed.commerce import keys
from shopfeed.commerce.catalog.search import PRODUCT_PROJECTION, PRODUCTS, product_document
from shopfeed.platform import clients, streams
from shopfeed.platform.search import SearchIndex, SearchQuery
from shopfeed.platform.search.sync import ApplyReport
from tests.integration.outbox_support import CommerceStream
from tests.support.search import delivered, osmem_engine, osmem_url, search_index

__all__ = ["osmem_engine", "osmem_url", "search_index"]


def if_match(version: int) -> dict[str, str]:
    return {"If-Match": f'"{version}"'}


def product_records(stream: CommerceStream) -> list[dict]:
    return [
        record
        for record in stream.read()
        if "Product" in str(record["dynamodb"].get("NewImage") or record["dynamodb"].get("OldImage"))
    ]


def deliver(records: list[dict], index: SearchIndex) -> ApplyReport:
    changes = [streams.parse(DynamoDBRecord(record)) for record in records]
    return delivered([c for c in changes if c.entity_type == "Product"], PRODUCT_PROJECTION, index)


def assert_index_matches_table(index: SearchIndex, product_ids: set[str]) -> None:
    """Every product of the table is its document at its version; every other id is a tombstone."""
    table = {item["product_id"]: item for item in table_items() if item.get("entity_type") == "Product"}
    stored = index.get(PRODUCTS, sorted(product_ids))
    for product_id in sorted(product_ids):
        if product_id in table:
            item = table[product_id]
            assert stored[product_id].deleted is False, product_id
            assert stored[product_id].version == item["version"], product_id
            assert dict(stored[product_id].body) == product_document(item)[1], product_id
        else:
            assert stored[product_id].deleted is True, product_id


@pytest.fixture
def history(admin: ApiClient, stream: CommerceStream) -> list[dict]:
    """P-RED-TSHIRT reaches v3 through two edits and a restock; P-BLK-CAP is edited, then removed."""
    create_product(admin, "P-RED-TSHIRT", available=10)
    create_product(admin, "P-BLK-CAP", available=5)
    answers = [
        admin.patch("/products/P-RED-TSHIRT", {"name": "Crimson Tee"}, headers=if_match(1)),
        admin.post("/products/P-RED-TSHIRT/stock", {"quantity": 5}, headers={"Idempotency-Key": "restock-1"}),
        admin.patch("/products/P-RED-TSHIRT", {"description": "A red shirt, cotton"}, headers=if_match(2)),
        admin.patch("/products/P-BLK-CAP", {"name": "Black cap"}, headers=if_match(1)),
    ]
    assert [answer.status for answer in answers] == [200, 201, 200, 200], [answer.text for answer in answers]
    clients.dynamodb().delete_item(TableName="CommerceTable", Key=_key(keys.product("P-BLK-CAP")))
    records = product_records(stream)
    # (the restock writes the product's stock bucket, not the product item: no product record)
    assert [r["eventName"] for r in records] == ["INSERT", "INSERT", "MODIFY", "MODIFY", "MODIFY", "REMOVE"]
    return records


def _key(key: dict[str, str]) -> dict[str, dict[str, str]]:
    return {name: {"S": value} for name, value in key.items()}


def test_an_in_order_stream_leaves_the_index_as_the_table(history: list[dict], search_index: SearchIndex) -> None:
    # when
    report = deliver(history, search_index)
    # then: the restock changed no version, so it queued nothing (six writes of seven records)
    assert (report.applied, report.stale, report.failures) == (6, 0, {})
    assert_index_matches_table(search_index, {"P-RED-TSHIRT", "P-BLK-CAP"})


def test_a_batch_replayed_out_of_order_and_twice_leaves_the_index_as_the_table(
    history: list[dict], search_index: SearchIndex
) -> None:
    # given: MODIFY v3 before v2 before the INSERT, the REMOVE before the MODIFY it followed
    insert_red, insert_cap, red_v2, red_v3, cap_v2, remove_cap = history
    scrambled = [red_v3, remove_cap, red_v2, insert_red, cap_v2, insert_cap]
    # when: the scrambled batch, then all of it again as a redelivery would
    first = deliver(scrambled, search_index)
    again = deliver(history, search_index)
    # then
    assert (first.applied, first.stale, first.failures) == (2, 4, {})
    # (a tombstone rewritten at its own version changes nothing: the one "applied" of the redelivery)
    assert (again.applied, again.stale, again.failures) == (1, 5, {})
    assert_index_matches_table(search_index, {"P-RED-TSHIRT", "P-BLK-CAP"})
    search_index.refresh(PRODUCTS)
    found = search_index.search(PRODUCTS, SearchQuery("shirt cap", ("name", "description"), 10)).hits
    assert [hit.doc_id for hit in found] == ["P-RED-TSHIRT"]


def test_a_late_update_after_the_remove_does_not_bring_the_product_back(
    history: list[dict], search_index: SearchIndex
) -> None:
    # given
    *_, cap_v2, remove_cap = history
    deliver([remove_cap], search_index)
    # when
    report = deliver([cap_v2, history[1]], search_index)
    # then
    assert (report.applied, report.stale) == (0, 2)
    assert search_index.get(PRODUCTS, ["P-BLK-CAP"])["P-BLK-CAP"].deleted is True
