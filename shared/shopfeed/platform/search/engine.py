"""The search engine a function is configured with (``SEARCH_ENDPOINT``), for the composition roots.

opensearch-py is imported on first use, not here: ~0.5 s that a function's other work (an API's
other routes) should not pay at init.
"""

from shopfeed.platform.config import SearchSettings, settings
from shopfeed.platform.search import SearchIndex


def configured() -> SearchIndex | None:
    """The engine of ``SEARCH_ENDPOINT``, or None when the stack has none (search is off)."""
    config = settings(SearchSettings)
    if not config.search_endpoint:
        return None
    from shopfeed.platform.search.opensearch import connect

    return connect(config.search_endpoint, config.search_signing_service)
