"""make reindex against moto and each search engine: the rebuild's two passes and its pace.
(The 5,000-product run is in tests/ddblocal/test_reindex.py: moto's Scan is too slow for it.)"""

from collections.abc import Iterator, Sequence

from local.harness.tables import table_items
from shopfeed.commerce import items
from shopfeed.commerce.catalog.search import PRODUCT_PROJECTION, PRODUCTS
from shopfeed.platform import clients, dynamo
from shopfeed.platform.search import SearchIndex, reindex
from shopfeed.platform.search.rebuild import Pace, rebuild
from tests.support.catalog import assert_index_holds, catalog, put_items
from tests.support.search import osmem_engine, osmem_url, search_index

__all__ = ["osmem_engine", "osmem_url", "search_index"]


def test_a_product_changed_during_the_rebuild_ends_at_its_newest_version(aws: None, search_index: SearchIndex) -> None:
    # given: the first pass reads P-00001 at v2; an edit (v9) lands before the second pass
    put_items("CommerceTable", catalog(30))
    pages = reindex.scan_pages(clients.dynamodb(), "CommerceTable", items.PRODUCT, page_size=10)
    passes = 0

    def edited_between_passes() -> Iterator[Sequence[dynamo.Item]]:
        nonlocal passes
        passes += 1
        if passes == 2:
            put_items("CommerceTable", [{**catalog(2)[1], "name": "Renamed", "version": 9}])
        yield from pages()

    # when
    report = rebuild(PRODUCT_PROJECTION, search_index, edited_between_passes, Pace(1e9), "20261123000000")
    # then
    assert (report.indexed, report.caught_up) == (30, 1)
    assert search_index.get(PRODUCTS, ["P-00001"])["P-00001"].body["name"] == "Renamed"
    assert assert_index_holds(search_index, table_items()) == 30


def test_the_pace_sleeps_as_long_as_each_page_was_early() -> None:
    # given: 100 items a second, a clock that does not move
    pace = Pace(items_per_second=100, sleep=lambda _: None, clock=lambda: 50.0)
    # when: three pages of 50
    for _ in range(3):
        pace.after(50)
    # then: the first page is the start line, each next one is due half a second later
    assert pace.slept == [0.5, 1.0]
