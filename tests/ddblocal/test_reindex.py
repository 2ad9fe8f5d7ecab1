"""make reindex at scale: 5,000 products from DynamoDB Local into each search engine match the table."""

import boto3
import pytest

from local import dynamodb_local
from local.harness.builders import customer
from local.harness.tables import create_tables
from shopfeed.commerce import items
from shopfeed.commerce.catalog.reindex import PRODUCTS_SOURCE
from shopfeed.commerce.catalog.search import PRODUCTS
from shopfeed.platform import clients
from shopfeed.platform.search import Remove, SearchIndex, SearchQuery, reindex
from shopfeed.platform.search.rebuild import Pace
from tests.conftest import TEST_ENVIRONMENT
from tests.ddblocal.conftest import StoredItems, point_at
from tests.support.catalog import assert_index_holds, catalog, put_items
from tests.support.search import osmem_engine, osmem_url, search_index

__all__ = ["osmem_engine", "osmem_url", "search_index"]

pytestmark = [pytest.mark.ddblocal, pytest.mark.volume, pytest.mark.xdist_group(__name__)]


@pytest.fixture(scope="module")
def catalog_tables(engine: dynamodb_local.DynamoDBLocal) -> dict[str, str]:
    """The template's tables holding the catalog and one item of another type, written once for both
    engines' tests: a reindex only reads the table, and writing 5,000 products was most of each
    test's time (11-18 s of 14-23 s alone). The module's engine goes with the module."""
    client = boto3.client(
        "dynamodb",
        endpoint_url=engine.endpoint,
        region_name=TEST_ENVIRONMENT["AWS_REGION"],
        aws_access_key_id=TEST_ENVIRONMENT["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=TEST_ENVIRONMENT["AWS_SECRET_ACCESS_KEY"],
    )
    names = create_tables(client, suffix="-catalog")
    put_items(names["CommerceTable"], [*catalog(5000), items.customer_item(customer())], client)
    return names


@pytest.fixture
def tables(
    catalog_tables: dict[str, str],
    engine: dynamodb_local.DynamoDBLocal,
    environment: None,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    point_at(engine, monkeypatch, catalog_tables)
    return catalog_tables


def test_reindex_of_5000_products_matches_the_table(
    tables: dict[str, str], stored: StoredItems, search_index: SearchIndex
) -> None:
    # given: the catalog and one item of another type (catalog_tables), and a live index holding a
    # tombstone
    search_index.write(PRODUCTS, [Remove("P-GONE", 3)])
    unpaced = Pace(items_per_second=1e9, sleep=lambda _: None)
    # when
    report = reindex.reindex(
        PRODUCTS_SOURCE, clients.dynamodb(), tables["CommerceTable"], search_index, 1e9, 500, unpaced
    )
    # then: every product is its document; the old index (and its tombstone) is gone
    assert (report.indexed, report.caught_up, report.failures) == (5000, 0, {})
    assert report.dropped == [PRODUCTS.physical]
    assert assert_index_holds(search_index, stored.all()) == 5000
    assert search_index.get(PRODUCTS, ["P-GONE"]) == {}
    assert len(search_index.search(PRODUCTS, SearchQuery("mug", ("name",), 5, {"category": "mugs"})).hits) == 5
