"""Post search: how a post item becomes a document of the ``posts`` index, and the query.

Indexed: what a reader types and filters on (the text, the tags, the author's handle) plus what a
result row shows (author, time). The handle comes from the post item itself: the post service
copies it from the author's profile, which it reads anyway to decide the delivery, and handles never
change; so the sync reads nothing but the record. Not indexed: the like and comment counters. They
change with every batch of likes without a new ``version``, so an indexed copy would be stale at once
and every like would cost a search write; a result links to ``GET /posts/{id}`` for the live figures.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Final

from shopfeed.feed import items
from shopfeed.platform import dynamo
from shopfeed.platform.search import SearchIndex, SearchMapping, SearchPage, SearchQuery
from shopfeed.platform.search.projection import Projection

POSTS: Final = SearchMapping(
    alias="posts",
    # Bump when the fields below change, then rebuild (docs/operations.md, "Search mapping change").
    revision=1,
    fields={
        "post_id": {"type": "keyword"},
        "author_id": {"type": "keyword"},
        # Text, not keyword: a keyword field matches only a query that is the whole handle, and
        # "grace indexes" should find Grace's posts. The standard analyzer keeps "ada_l" one token.
        "author_handle": {"type": "text", "analyzer": "standard"},
        # English stemming: "indexes" finds "index".
        "text": {"type": "text", "analyzer": "english"},
        "tags": {"type": "keyword"},
        "created_at": {"type": "date"},
    },
    key_field="post_id",
)
# A word that is a tag or the author's handle says more than a word of the text.
POST_SEARCH_FIELDS: Final = ("text", "tags^2", "author_handle^2")


def post_document(item: dynamo.Item) -> tuple[str, dict[str, Any]]:
    """The document of a post item (raises KeyError / ValueError for one that is not a post)."""
    post = items.post_from(item)
    document: dict[str, Any] = {
        "post_id": post.post_id,
        "author_id": post.author_id,
        "text": post.text,
        "tags": list(post.tags),
        "created_at": post.created_at,
    }
    if post.author_handle is not None:
        document["author_handle"] = post.author_handle
    return post.post_id, document


def _post_id(item: dynamo.Item) -> str:
    return str(item["post_id"])


def _version(item: dynamo.Item) -> int:
    # Posts written before they carried a version are at their first and only one.
    return int(item.get("version", 1))


POST_PROJECTION: Final = Projection(POSTS, post_document, _post_id, version_of=_version)


def search_posts(index: SearchIndex, text: str, tag: str | None, size: int, after: Sequence[Any] | None) -> SearchPage:
    """Posts matching ``text``, most relevant first, optionally only those with ``tag``."""
    filters: Mapping[str, str] = {"tags": tag} if tag else {}
    return index.search(POSTS, SearchQuery(text, POST_SEARCH_FIELDS, size, filters, after))
