"""make reindex at scale: 5,000 products from DynamoDB Local into each search engine match the table."""

import pytest

from local.harness.builders import customer
from shopfeed.commerce import items
from shopfeed.commerce.catalog.reindex import PRODUCTS_SOURCE
from shopfeed.commerce.catalog.search import PRODUCTS
from shopfeed.platform import clients
from shopfeed.platform.search import Remove, SearchIndex, SearchQuery, reindex
from shopfeed.platform.search.rebuild import Pace
from tests.ddblocal.conftest import StoredItems
from tests.support.catalog import assert_index_holds, catalog, put_items
from tests.support.search import osmem_engine, osmem_url, search_index

__all__ = ["osmem_engine", "osmem_url", "search_index"]

pytestmark = [pytest.mark.ddblocal, pytest.mark.volume, pytest.mark.xdist_group(__name__)]


def test_reindex_of_5000_products_matches_the_table(
    tables: dict[str, str], stored: StoredItems, search_index: SearchIndex
) -> None:
    # given: the catalog, one item of another type, and a live index holding a tombstone
    put_items(tables["CommerceTable"], [*catalog(5000), items.customer_item(customer())])
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
