"""The search sync chain on moto: the commerce stream consumer queues each product change's versioned
write on the template's SearchSyncQueue, the worker (through the template's SQS mapping) applies them
to osmem; an unreachable engine fails every message, which waits its backoff on the queue (never in the
DLQ) and is written once the engine is back."""

import json
from typing import Any

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, if_match
from local.harness.tables import table_items
from shopfeed.commerce.catalog.search import PRODUCT_PROJECTION, PRODUCTS
from shopfeed.platform.search import SearchIndex
from shopfeed.platform.search.opensearch import connect
from shopfeed.platform.search.sync import BACKOFF
from tests.integration.outbox_support import STREAM_FUNCTION, CommerceStream, batch
from tests.support.commerce_stream import routed
from tests.support.queue_time import QueueTime, queue_time
from tests.support.search import EngineLink, SearchSyncLine, engine_link, osmem_engine, osmem_url, search_sync

__all__ = ["engine_link", "osmem_engine", "osmem_url", "queue_time", "search_sync"]


@pytest.fixture
def linked(engine_link: EngineLink, search_sync: SearchSyncLine, monkeypatch: pytest.MonkeyPatch) -> EngineLink:
    """A stack with search, its engine behind a link the test can cut."""
    monkeypatch.setenv("SEARCH_ENDPOINT", engine_link.url)
    return engine_link


@pytest.fixture
def engine(osmem_url: str) -> SearchIndex:
    """The engine itself, not through the link: what the index holds."""
    return connect(osmem_url, timeout=60)


def consume(stream: CommerceStream) -> dict[str, Any]:
    """Hand what the consumer's filter lets in of the stream to the commerce stream consumer."""
    from functions.commerce_stream.app import lambda_handler

    return dict(lambda_handler(batch(routed(stream.read())), STREAM_FUNCTION))


def assert_index_holds_the_products(index: SearchIndex) -> None:
    products = {item["product_id"]: item for item in table_items() if item.get("entity_type") == "Product"}
    stored = index.get(PRODUCTS, sorted(products))
    assert {product_id: doc.version for product_id, doc in stored.items()} == {
        product_id: item["version"] for product_id, item in products.items()
    }
    for product_id, item in products.items():
        assert dict(stored[product_id].body) == PRODUCT_PROJECTION.document(item)[1], product_id


def test_a_product_change_is_queued_as_its_versioned_write_and_the_worker_applies_it(
    admin: ApiClient, stream: CommerceStream, linked: EngineLink, search_sync: SearchSyncLine, engine: SearchIndex
) -> None:
    # given a product created, then edited
    create_product(admin, "P-RED-TSHIRT", name="Red T-Shirt")
    assert admin.patch("/products/P-RED-TSHIRT", {"name": "Crimson Tee"}, headers=if_match('"1"')).status == 200
    # when the stream consumer is handed its records
    assert consume(stream) == {"batchItemFailures": []}
    # then one write per version waits on the queue, naming its index
    queued = [json.loads(body) for body in search_sync.waiting(release=True)]
    assert sorted((w["index"], w["doc_id"], w["version"], w["body"]["name"]) for w in queued) == [
        ("products", "P-RED-TSHIRT", 1, "Red T-Shirt"),
        ("products", "P-RED-TSHIRT", 2, "Crimson Tee"),
    ]
    # and when the worker takes them, the index holds the product at its newest version
    search_sync.drain()
    assert_index_holds_the_products(engine)
    assert search_sync.dead_letters() == []


def test_an_unreachable_engine_leaves_every_write_on_the_queue_held_back_until_it_is_back(
    admin: ApiClient,
    stream: CommerceStream,
    linked: EngineLink,
    search_sync: SearchSyncLine,
    engine: SearchIndex,
    queue_time: QueueTime,
) -> None:
    # given writes queued while the engine is unreachable
    linked.cut()
    for product_id in ("P-RED-TSHIRT", "P-BLK-CAP"):
        create_product(admin, product_id)
    assert consume(stream) == {"batchItemFailures": []}
    # when the worker takes them three times, each time after the wait it was given
    poller = search_sync.poller()
    waits = []
    for receive in (1, 2, 3):
        assert poller.poll() == 2, receive
        assert poller.poll() == 0, receive  # held back: nothing visible at once
        queue_time.advance(BACKOFF.delay(receive) - 1)
        assert poller.poll() == 0, receive  # not a second early
        queue_time.advance(1)
        waits.append(BACKOFF.delay(receive))
    # then both writes are still on the queue, none in its DLQ, after 10 + 20 + 40 s
    assert (waits, len(search_sync.waiting(release=True)), search_sync.dead_letters()) == ([10, 20, 40], 2, [])
    # when the engine is back
    linked.restore()
    search_sync.drain()
    # then the index is the table
    assert_index_holds_the_products(engine)
    assert (search_sync.waiting(), search_sync.dead_letters()) == ([], [])
