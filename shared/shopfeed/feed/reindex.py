"""Rebuild the posts index from FeedTable: ``make reindex`` locally, or an operator in AWS::

    python -m shopfeed.feed.reindex --table shopfeed-dev-FeedTable-XXXX \\
        --search-endpoint https://search-....es.amazonaws.com --rate 200

The job itself is the platform's (``platform.search.reindex``): a paged Scan at a bounded rate, a new index
beside the live one, the alias moved in one call (docs/operations.md, "Rebuild a search index").
"""

import sys
from collections.abc import Sequence
from typing import Final

from shopfeed.feed import items
from shopfeed.feed.posts.search import POST_PROJECTION
from shopfeed.platform.search import reindex

POSTS_SOURCE: Final = reindex.Source(POST_PROJECTION, items.POST, "FeedTable", "FEED_TABLE_NAME")


def main(argv: Sequence[str] | None = None) -> int:
    return reindex.main(POSTS_SOURCE, "Rebuild the posts search index from FeedTable.", argv)


if __name__ == "__main__":
    sys.exit(main())
