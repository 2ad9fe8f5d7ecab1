"""Product search through the functions: the stream consumer queues the writes of CommerceTable's
Product records (moto's stream), the search sync worker applies them to osmem, and GET /search/products
answers from it."""

from typing import Any

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product
from shopfeed.commerce import items, keys
from shopfeed.platform import clients, dynamo
from tests.integration.outbox_support import STREAM_FUNCTION, CommerceStream, batch, failed_sequence_numbers
from tests.support.search import SearchSyncLine, osmem_engine, osmem_url, search_sync

__all__ = ["osmem_engine", "osmem_url", "search_sync"]


@pytest.fixture
def search_endpoint(osmem_url: str, search_sync: SearchSyncLine, monkeypatch: pytest.MonkeyPatch) -> str:
    """A stack with search: the engine, and the queue the consumer puts its writes on (``search_sync``)."""
    monkeypatch.setenv("SEARCH_ENDPOINT", osmem_url)
    return osmem_url


def consume(stream: CommerceStream) -> dict[str, Any]:
    """Deliver what the stream holds to the commerce stream consumer, as Lambda would."""
    from functions.commerce_stream.app import lambda_handler

    records = stream.read()
    return dict(lambda_handler(batch(records), STREAM_FUNCTION)) | {"records": records}


@pytest.fixture
def catalog(admin: ApiClient, stream: CommerceStream, search_endpoint: str, search_sync: SearchSyncLine) -> None:
    create_product(admin, "P-RED-TSHIRT", name="Red T-Shirt", category="apparel")
    create_product(admin, "P-BLUE-SHIRT", name="Blue work shirt", category="apparel")
    create_product(admin, "P-SHIRT-HAT", name="Hat", category="hats")
    create_product(admin, "P-MUG", name="Tea mug", category="kitchen")
    assert consume(stream)["batchItemFailures"] == []
    search_sync.drain()


def ids(answer: Any) -> list[str]:
    return [item["product_id"] for item in answer.json["items"]]


def test_search_finds_products_by_name_most_relevant_first(commerce_api: ApiClient, catalog: None) -> None:
    # when
    answer = commerce_api.get("/search/products", query={"q": "shirt"})
    # then: the hat matches on its id alone, which is not searched
    assert answer.status == 200, answer.text
    assert set(ids(answer)) == {"P-RED-TSHIRT", "P-BLUE-SHIRT"}
    assert answer.json["items"][0]["price"] == {"amount": 1999, "currency": "EUR"}


def test_search_filters_by_category(commerce_api: ApiClient, catalog: None) -> None:
    # when
    answer = commerce_api.get("/search/products", query={"q": "hat", "category": "hats"})
    # then
    assert ids(answer) == ["P-SHIRT-HAT"]


def test_search_pages_with_a_cursor_bound_to_its_query(commerce_api: ApiClient, catalog: None) -> None:
    # given
    first = commerce_api.get("/search/products", query={"q": "shirt", "limit": 1})
    cursor = first.json["next_cursor"]
    # when
    second = commerce_api.get("/search/products", query={"q": "shirt", "limit": 1, "cursor": cursor})
    foreign = commerce_api.get("/search/products", query={"q": "mug", "limit": 1, "cursor": cursor})
    # then
    assert sorted(ids(first) + ids(second)) == ["P-BLUE-SHIRT", "P-RED-TSHIRT"]
    assert foreign.status == 400
    assert foreign.json["type"].endswith("/invalid-cursor")


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"q": ""},
        {"q": "   "},
        {"q": "x" * 201},
        {"q": "shirt", "limit": 0},
        {"q": "shirt", "limit": 51},
        {"q": "shirt", "category": "Not A Category"},
    ],
)
def test_a_bad_search_is_422(commerce_api: ApiClient, search_endpoint: str, query: dict[str, Any]) -> None:
    # when
    answer = commerce_api.get("/search/products", query=query)
    # then
    assert answer.status == 422, answer.text


def test_search_without_a_token_is_401(commerce_api: ApiClient, search_endpoint: str) -> None:
    # when
    answer = commerce_api.as_user(None).get("/search/products", query={"q": "shirt"})
    # then
    assert answer.status == 401


def test_search_without_a_configured_engine_is_503(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get("/search/products", query={"q": "shirt"})
    # then
    assert answer.status == 503
    assert answer.json["type"].endswith("/search-unavailable")


def test_a_product_record_that_can_never_index_fails_alone(
    admin: ApiClient, stream: CommerceStream, search_endpoint: str
) -> None:
    # given: a product item without a name (no API writes one) between two good ones
    create_product(admin, "P-GOOD-1")
    poison = {**keys.product("P-POISON"), "entity_type": items.PRODUCT, "product_id": "P-POISON", "version": 1}
    clients.dynamodb().put_item(TableName="CommerceTable", Item=dynamo.serialize(poison))
    create_product(admin, "P-GOOD-2")
    # when
    first = consume(stream)
    # then: only the poison record fails (as it will on each retry, until the mapping parks it in the DLQ)
    poison_sequence = [
        r["dynamodb"]["SequenceNumber"] for r in first["records"] if "P-POISON" in str(r["dynamodb"]["Keys"])
    ]
    assert failed_sequence_numbers(first) == poison_sequence


def test_without_a_search_engine_product_records_are_acknowledged(admin: ApiClient, stream: CommerceStream) -> None:
    # given: a stack deployed with search off (no search sync queue, no SEARCH_ENDPOINT)
    create_product(admin, "P-RED-TSHIRT")
    # when
    answer = consume(stream)
    # then: nothing to retry, nothing for the DLQ
    assert answer["batchItemFailures"] == []
