"""Rebuild the products index from CommerceTable: ``make reindex`` locally, or an operator in AWS::

    python -m shopfeed.commerce.catalog.reindex --table shopfeed-dev-CommerceTable-XXXX \\
        --search-endpoint https://search-....es.amazonaws.com --rate 200

The job itself is the platform's (``platform.search.reindex``): a paged Scan at a bounded rate, a new index
beside the live one, the alias moved in one call (docs/operations.md, "Rebuild a search index").
"""

import sys
from collections.abc import Sequence
from typing import Final

from shopfeed.commerce import items
from shopfeed.commerce.catalog.search import PRODUCT_PROJECTION
from shopfeed.platform.search import reindex

PRODUCTS_SOURCE: Final = reindex.Source(PRODUCT_PROJECTION, items.PRODUCT, "CommerceTable", "COMMERCE_TABLE_NAME")


def main(argv: Sequence[str] | None = None) -> int:
    return reindex.main(PRODUCTS_SOURCE, "Rebuild the products search index from CommerceTable.", argv)


if __name__ == "__main__":
    sys.exit(main())
