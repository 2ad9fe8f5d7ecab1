"""Product search: how a product item becomes a document of the ``products`` index, and the query.

Indexed: what a shopper types and filters on (name, description, category) plus what a result row
shows (price). Not indexed: stock. It changes with every order without a new ``version``, so an
indexed copy would be stale at once, and every order would cost a search write; a result links to
``GET /products/{id}`` for the live figure.
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from shopfeed.platform.search import SearchIndex, SearchMapping, SearchPage, SearchQuery
from shopfeed.platform.search.projection import Projection

if TYPE_CHECKING:
    from shopfeed.platform import dynamo

PRODUCTS: Final = SearchMapping(
    alias="products",
    # Bump when the fields below change, then rebuild (docs/operations.md, "Search mapping change").
    revision=1,
    fields={
        "product_id": {"type": "keyword"},
        # English stemming: "shirts" finds "T-Shirt".
        "name": {"type": "text", "analyzer": "english"},
        "description": {"type": "text", "analyzer": "english"},
        "category": {"type": "keyword"},
        "price": {"properties": {"amount": {"type": "long"}, "currency": {"type": "keyword"}}},
        "updated_at": {"type": "date"},
    },
    key_field="product_id",
)
# A word in the name says more than one in the description; a query naming the category matches it.
PRODUCT_SEARCH_FIELDS: Final = ("name^3", "description", "category^2")


def product_document(item: "dynamo.Item") -> tuple[str, dict[str, Any]]:
    """The document of a product item (raises KeyError / ValueError for one that is not a product)."""
    # Imported here: the search sync maps items, the API's search route never does (decision 214).
    from shopfeed.commerce import items

    product = items.product_from(item)
    return product.product_id, {
        "product_id": product.product_id,
        "name": product.name,
        "description": product.description,
        "category": product.category,
        "price": product.price.model_dump(),
        "updated_at": product.updated_at,
    }


def _product_id(item: "dynamo.Item") -> str:
    return str(item["product_id"])


PRODUCT_PROJECTION: Final = Projection(PRODUCTS, product_document, _product_id)


def search_products(
    index: SearchIndex, text: str, category: str | None, size: int, after: Sequence[Any] | None
) -> SearchPage:
    """Products matching ``text``, most relevant first, optionally within one category."""
    filters: Mapping[str, str] = {"category": category} if category else {}
    return index.search(PRODUCTS, SearchQuery(text, PRODUCT_SEARCH_FIELDS, size, filters, after))
