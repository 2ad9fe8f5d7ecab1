"""Full-text search: the port (``port``), its OpenSearch adapter (``opensearch``, imported only where
an engine is built: it is slow to import), the engine a function is configured with (``engine``),
sync from the tables' streams through a queue (``sync``), paged answers for routes (``pages``) and
index rebuilds (``rebuild``, ``reindex``). The port's names are the package's interface:
``from shopfeed.platform.search import SearchIndex``.
"""

from shopfeed.platform.search.port import (
    DELETED_FIELD,
    MAX_PAGE_SIZE,
    VERSION_FIELD,
    Outcome,
    Remove,
    SearchHit,
    SearchIndex,
    SearchMapping,
    SearchPage,
    SearchQuery,
    SearchUnavailable,
    SearchWriteFailed,
    StoredDocument,
    Upsert,
    Write,
    document,
    stored,
)

__all__ = [
    "DELETED_FIELD",
    "MAX_PAGE_SIZE",
    "VERSION_FIELD",
    "Outcome",
    "Remove",
    "SearchHit",
    "SearchIndex",
    "SearchMapping",
    "SearchPage",
    "SearchQuery",
    "SearchUnavailable",
    "SearchWriteFailed",
    "StoredDocument",
    "Upsert",
    "Write",
    "document",
    "stored",
]
