"""Post search (the ``posts`` index; shopfeed.feed.posts.search): most relevant first."""

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from shopfeed.feed import bootstrap, queries
from shopfeed.feed.posts import search
from shopfeed.feed.routes import Reader
from shopfeed.feed.schemas import PostHit, PostSearchPage, TagParam
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller
from shopfeed.platform.parameters import Cursor
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.search import SearchUnavailable
from shopfeed.platform.search import pages as search_pages

router = Router()
SearchText = Annotated[
    str, search_pages.SEARCH_TEXT, Query(description="Words to look for in the text, the tags and the author's handle")
]


@router.get(
    "/search/posts",
    summary="Search posts by text, tags and author handle, most relevant first (deleted posts never appear)",
    responses=problem_responses(errors.InvalidCursor, SearchUnavailable),
    tags=["posts"],
)
def search_posts(
    q: SearchText,
    caller: CurrentCaller,
    reader: Reader,
    tag: Annotated[TagParam | None, Query(description="Only posts with this tag ('#DynamoDB' is 'dynamodb')")] = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 20,
    cursor: Cursor = None,
) -> PostSearchPage:
    page, next_cursor = search_pages.answer(
        bootstrap.cursors(),
        search_pages.scope("search-posts", q, tag),
        cursor,
        bootstrap.api_search_index(),
        lambda index, after: search.search_posts(index, q, tag, limit, after),
    )
    # The index follows a delete through the stream (about a second behind): a hit whose post is gone
    # from the table is left out, so a deleted post never appears (one BatchGetItem of the page's keys).
    hits = [PostHit.of(hit) for hit in page.hits]
    posts = queries.existing_posts(reader, [hit.post_id for hit in hits])
    return PostSearchPage(items=[hit for hit in hits if hit.post_id in posts], next_cursor=next_cursor)
