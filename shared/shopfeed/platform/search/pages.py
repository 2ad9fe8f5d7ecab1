"""Paging a search route: signed cursors around the engine's ``search_after`` position.

The cursor is bound to the query (its scope names the route and every term), so another text or
filter cannot continue it, and a forged one is refused with 400 before the engine is asked.
"""

import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from pydantic import StringConstraints

from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.errors import InvalidCursor
from shopfeed.platform.search import SearchIndex, SearchPage, SearchUnavailable

# The words of a search: at least one character that is not a space (the pattern says so in the
# OpenAPI document too). Each route adds its own Query(description=...).
SEARCH_TEXT: Final = StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=r"\S")


def scope(route: str, *terms: str | None) -> str:
    """The cursor scope of one query: the route and its terms, unambiguously joined."""
    return f"{route}:" + json.dumps(list(terms), separators=(",", ":"))


def search_after(codec: CursorCodec, query_scope: str, cursor: str | None) -> list[Any] | None:
    """The engine position a cursor holds (None for the first page). Raises InvalidCursor."""
    position = codec.decode(query_scope, cursor)
    if position is None:
        return None
    # A signed cursor was made by us; its shape is still checked so a future format change fails as 400.
    valid = (
        isinstance(position, list)
        and len(position) == 2
        and isinstance(position[0], int | float)
        and isinstance(position[1], str)
    )
    if not valid:
        raise InvalidCursor()
    return list(position)


def next_cursor(codec: CursorCodec, query_scope: str, page: SearchPage) -> str | None:
    return codec.encode(query_scope, page.next_after) if page.next_after is not None else None


def answer(
    codec: CursorCodec,
    query_scope: str,
    cursor: str | None,
    index: SearchIndex | None,
    run: Callable[[SearchIndex, Sequence[Any] | None], SearchPage],
) -> tuple[SearchPage, str | None]:
    """One page of a search route and the cursor of the next: the cursor is checked first (400),
    then the engine's presence (503, search is off), then ``run`` asks the engine."""
    after = search_after(codec, query_scope, cursor)
    if index is None:
        raise SearchUnavailable("no search engine is configured (SEARCH_ENDPOINT)")
    page = run(index, after)
    return page, next_cursor(codec, query_scope, page)
