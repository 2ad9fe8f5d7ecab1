"""Product search (the ``products`` index; shopfeed.commerce.search): most relevant first."""

import json
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query
from pydantic import StringConstraints

from shopfeed.commerce import bootstrap, search
from shopfeed.commerce.schemas import Category, ProductHit, ProductSearchPage
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller
from shopfeed.platform.parameters import Cursor
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.search import SearchUnavailable

router = Router()
SearchText = Annotated[
    str,
    # At least one character that is not a space (the pattern says so in the OpenAPI document too).
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=r"\S"),
    Query(description="Words to look for in the name, description and category"),
]


@router.get(
    "/search/products",
    summary="Search products by name, description and category, most relevant first",
    responses=problem_responses(errors.InvalidCursor, SearchUnavailable),
    tags=["products"],
)
def search_products(
    q: SearchText,
    caller: CurrentCaller,
    category: Annotated[Category | None, Query(description="Only this category")] = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 20,
    cursor: Cursor = None,
) -> ProductSearchPage:
    codec = bootstrap.cursors()
    # The cursor is bound to the query: another text or category cannot continue it.
    scope = "search-products:" + json.dumps([q, category], separators=(",", ":"))
    after = _search_after(codec.decode(scope, cursor))
    index = bootstrap.search_index()
    if index is None:
        raise SearchUnavailable("no search engine is configured (SEARCH_ENDPOINT)")
    page = search.search_products(index, q, category, limit, after)
    next_cursor = codec.encode(scope, page.next_after) if page.next_after is not None else None
    return ProductSearchPage(items=[ProductHit.of(hit) for hit in page.hits], next_cursor=next_cursor)


def _search_after(position: Any) -> list[Any] | None:
    # A signed cursor was made by us; its shape is still checked so a future format change fails as 400.
    if position is None:
        return None
    valid = (
        isinstance(position, list)
        and len(position) == 2
        and isinstance(position[0], int | float)
        and isinstance(position[1], str)
    )
    if not valid:
        raise errors.InvalidCursor()
    return list(position)
