"""A search engine down for longer than the streams' retry budget, then back, with every event source
mapping of the template running in this process (``local.harness.mappings``: the streams' retry
budgets and OnFailure queues, the queues' redrive policies), the engine behind a link the test cuts,
and queue time moved forward by the test. The index ends equal to the tables, no dead-letter queue
holds anything, and nobody ran a step by hand."""

from pathlib import Path

import pytest

from local.harness import mappings
from local.harness.client import ApiClient
from local.harness.factories import create_product, if_match
from local.harness.feed_factories import follow, write_post
from local.harness.feed_seed import register_profiles
from local.harness.tables import table_items
from shopfeed.commerce import keys
from shopfeed.commerce.catalog.search import PRODUCT_PROJECTION
from shopfeed.feed.posts.search import POST_PROJECTION
from shopfeed.platform import clients, dynamo
from shopfeed.platform.search import SearchIndex
from shopfeed.platform.search.opensearch import connect
from shopfeed.platform.search.projection import Projection
from tests.conftest import reset_caches
from tests.support.queue_time import QueueTime, queue_time
from tests.support.search import EngineLink, engine_link, osmem_engine, osmem_url

__all__ = ["engine_link", "osmem_engine", "osmem_url", "queue_time"]

# Queue time moves in steps of the longest wait a message is given before its next delivery.
STEP_S = 600
# Longer than a stream retries a record: 5 retries (spent at once here), records an hour old at most.
OUTAGE_S = 2 * 3600


@pytest.fixture
def stack(aws: None, engine_link: EngineLink, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> mappings.Mappings:
    """The template's mappings, its search endpoint the link to the engine."""
    started = mappings.start({"SearchEndpoint": engine_link.url, "SearchResource": "domain/shopfeed-dev"}, tmp_path)
    for name, value in started.environment.items():
        monkeypatch.setenv(name, value)
    reset_caches()  # the functions read their settings from the environment just set
    return started


@pytest.fixture
def feed_api(aws: None) -> ApiClient:
    from functions.feed_api.app import lambda_handler

    register_profiles("U100", "U200")
    return ApiClient(lambda_handler, sub="U100")


@pytest.fixture
def engine(osmem_url: str) -> SearchIndex:
    """The engine itself, not through the link: what the index holds."""
    return connect(osmem_url, timeout=60)


def dead_letters(stack: mappings.Mappings) -> dict[str, int]:
    """The dead-letter queues (the streams' and the queues') that hold something, and how much."""
    queues = stack.dead_letter_queues()
    assert {"CommerceStreamDLQ", "FeedStreamDLQ"} <= set(queues)
    return {queue: depth for queue in queues if (depth := stack.depth(queue))}


def assert_index_holds_the_table(index: SearchIndex, projection: Projection, entity_type: str, ids: set[str]) -> None:
    """Each item of the table is its document at its version; each other id is a tombstone."""
    table = {}
    for item in table_items("CommerceTable") + table_items("FeedTable"):
        if item.get("entity_type") == entity_type:
            table[projection.id_of(item)] = item
    stored = index.get(projection.spec, sorted(ids))
    assert set(stored) == ids, projection.spec.alias
    for doc_id in sorted(ids):
        if doc_id in table:
            item = table[doc_id]
            assert (stored[doc_id].deleted, stored[doc_id].version) == (False, projection.version(item)), doc_id
            assert dict(stored[doc_id].body) == projection.document(item)[1], doc_id
        else:
            assert stored[doc_id].deleted is True, doc_id


def test_an_engine_down_longer_than_the_streams_retry_budget_comes_back_to_an_index_equal_to_the_tables(
    stack: mappings.Mappings,
    engine_link: EngineLink,
    queue_time: QueueTime,
    engine: SearchIndex,
    admin: ApiClient,
    feed_api: ApiClient,
) -> None:
    # given the engine is unreachable
    engine_link.cut()
    # when the catalog and the feed change meanwhile: created, edited, removed
    follow(feed_api.as_user("U200"), "U100")
    for product_id in ("P-RED-TSHIRT", "P-BLK-CAP", "P-MUG"):
        create_product(admin, product_id)
    assert admin.patch("/products/P-RED-TSHIRT", {"name": "Crimson Tee"}, headers=if_match('"1"')).status == 200
    clients.dynamodb().delete_item(TableName="CommerceTable", Key=dynamo.serialize(keys.product("P-BLK-CAP")))
    kept = write_post(feed_api, "Sparse indexes hold only what you query", "dynamodb")["post_id"]
    gone = write_post(feed_api, "Access patterns first")["post_id"]
    assert feed_api.delete(f"/posts/{gone}").status == 204
    # and the outage lasts longer than the streams retry any record, every mapping running meanwhile
    stack.run()
    for _ in range(OUTAGE_S // STEP_S):
        queue_time.advance(STEP_S)
        stack.run()
    # then the streams' other effects were not held up: the follower's home feed has the post
    assert [post["post_id"] for post in feed_api.as_user("U200").get("/feed").json["items"]] == [kept]
    # and no record was given up on: the eight index writes wait on their queue
    assert dead_letters(stack) == {}
    assert stack.depth("SearchSyncQueue") == 8  # products: 3 created, 1 edited, 1 removed; posts: 2, 1 deleted

    # when the engine is back
    engine_link.restore()
    queue_time.advance(STEP_S)
    stack.run()

    # then the index is the tables, nothing is left to write, and no dead-letter queue holds anything
    assert_index_holds_the_table(engine, PRODUCT_PROJECTION, "Product", {"P-RED-TSHIRT", "P-BLK-CAP", "P-MUG"})
    assert_index_holds_the_table(engine, POST_PROJECTION, "Post", {kept, gone})
    assert stack.depth("SearchSyncQueue") == 0
    assert dead_letters(stack) == {}
