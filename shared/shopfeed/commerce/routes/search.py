"""Product search (the ``products`` index; shopfeed.commerce.catalog.search): most relevant first."""

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from shopfeed.commerce import bootstrap
from shopfeed.commerce.catalog import search
from shopfeed.commerce.schemas import Category, ProductHit, ProductSearchPage
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller
from shopfeed.platform.parameters import Cursor
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.search import SearchUnavailable
from shopfeed.platform.search import pages as search_pages

router = Router()
SearchText = Annotated[
    str, search_pages.SEARCH_TEXT, Query(description="Words to look for in the name, description and category")
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
    page, next_cursor = search_pages.answer(
        bootstrap.cursors(),
        search_pages.scope("search-products", q, category),
        cursor,
        bootstrap.api_search_index(),
        lambda index, after: search.search_products(index, q, category, limit, after),
    )
    return ProductSearchPage(items=[ProductHit.of(hit) for hit in page.hits], next_cursor=next_cursor)
