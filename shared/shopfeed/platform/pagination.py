"""Pages over DynamoDB queries, with one opaque signed cursor per page (see ``cursors``).

``query_page`` reads one partition of one index. ``merged_page`` reads several partitions at once
(the write shards of a hot index, or a timeline and the partitions of the authors it follows) and
merges them by sort key, k-way: one Query per source still holding items. Its cursor is a watermark,
not a position per source: a page ends at the sort key of its last item, so the next page is every
source's items beyond it (one key condition each), plus a bit per source that is exhausted. The cursor
is so bounded whatever the sources' keys: the one sort key, and a hex digit per four sources.

Items compare by their source's sort key, so sources merged together must share its format, and a sort
key must name one item across the merge (``<ISO time>#<id>`` does): an item found in two sources (a
post both fanned out and pulled) is given once.

Both leave out items past their TTL that DynamoDB has not deleted yet (``dynamo.expiry``): a page may
hold fewer items than asked while more follow.
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypedDict, Unpack

from boto3.dynamodb.conditions import ConditionBase, Key

from shopfeed.platform import dynamo
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.errors import InvalidCursor
from shopfeed.platform.models import Page

_WATERMARK: Final = "w"
_EXHAUSTED: Final = "x"


class Positions(Protocol):
    """How a page's position travels between calls: ``CursorCodec`` signs it for a client to hold,
    ``UNSIGNED`` leaves it plain for the system's own messages."""

    def encode(self, scope: str, position: Any) -> str:
        """The position of ``scope``'s next page as text."""
        ...

    def decode(self, scope: str, cursor: str | None) -> Any:
        """The position ``cursor`` holds, None for the first page. Raises InvalidCursor."""
        ...


class UnsignedPositions:
    """Positions as plain JSON, for a page a worker hands itself through its own queue: no client ever
    holds it, so there is nothing to tamper with and no signing secret to read."""

    def encode(self, scope: str, position: Any) -> str:
        return json.dumps({"s": scope, "p": position}, separators=(",", ":"), sort_keys=True)

    def decode(self, scope: str, cursor: str | None) -> Any:
        if cursor is None:
            return None
        try:
            document = json.loads(cursor)
        except ValueError:
            raise InvalidCursor() from None
        if not isinstance(document, dict) or document.get("s") != scope:
            raise InvalidCursor()
        return document.get("p")


UNSIGNED: Final = UnsignedPositions()


def query_page(
    table: dynamo.Table,
    codec: Positions,
    scope: str,
    index: dynamo.IndexSpec,
    partition: str,
    limit: int,
    cursor: str | None,
    *,
    where: Callable[[Key], ConditionBase] | None = None,
    filter: ConditionBase | None = None,
    forward: bool = True,
    consistent: bool = False,
) -> tuple[list[dynamo.Item], str | None]:
    """Up to ``limit`` items of ``partition`` and the cursor of the next page (None on the last).

    ``scope`` names the query and its parameters (``posts-by-user:U100``): a cursor is accepted only
    by the query it came from. ``consistent`` reads strongly (the base table only). Raises InvalidCursor.
    """
    start = codec.decode(scope, cursor)
    # Limit + 1: DynamoDB answers a LastEvaluatedKey whenever it reaches Limit, so with Limit = limit
    # a partition ending exactly on a page would cost the client an empty last page.
    response = table.query(
        index,
        partition,
        where=where,
        filter=filter,
        forward=forward,
        limit=limit + 1,
        start=start,
        consistent=consistent,
    )
    raw = response["Items"]
    # More exists if the extra item came back, or DynamoDB stopped early at its 1 MB page limit.
    more = len(raw) > limit or "LastEvaluatedKey" in response
    raw = raw[:limit]
    next_cursor = None
    if more and raw:
        next_cursor = codec.encode(scope, {name: raw[-1][name] for name in index.position_attributes})
    # Items past their TTL are dropped after the cursor is placed: the next page still starts after them.
    now = dynamo.now_epoch()
    return [dynamo.deserialize(item) for item in raw if not dynamo.expired(item, now)], next_cursor


@dataclass(frozen=True)
class Source:
    """One partition a merged page reads: ``partition`` of ``index``."""

    index: dynamo.IndexSpec
    partition: str


def merged_page(
    table: dynamo.Table,
    codec: CursorCodec,
    scope: str,
    sources: Sequence[Source],
    limit: int,
    cursor: str | None,
    *,
    newest_first: bool = True,
) -> tuple[list[dynamo.Item], str | None]:
    """Up to ``limit`` items of every source merged by sort key (descending if ``newest_first``),
    and the one cursor of the next page. The sources' order must not change between pages: the
    cursor knows the exhausted ones by position. Raises InvalidCursor.
    """
    found, position = merge(table, sources, limit, codec.decode(scope, cursor), newest_first=newest_first)
    return found, None if position is None else codec.encode(scope, position)


class QueryOptions(TypedDict, total=False):
    """``query_page``'s options, as a ``Reader`` passes them on."""

    where: Callable[[Key], ConditionBase] | None
    filter: ConditionBase | None
    forward: bool
    consistent: bool


@dataclass(frozen=True)
class Reader:
    """The table and the API's cursor signer, which every paged read needs: repositories page through
    it, and a GET route that only reads calls a read-side query function directly with the reader its
    context's composition root builds (no port member, no pass-through use case)."""

    table: dynamo.Table
    cursors: CursorCodec

    def page_of[T](
        self,
        convert: Callable[[dynamo.Item], T],
        scope: str,
        source: Source,
        limit: int,
        cursor: str | None,
        **query: Unpack[QueryOptions],
    ) -> Page[T]:
        """``query_page`` of ``source`` on this table with this signer, each item made a value by
        ``convert``."""
        found, next_cursor = query_page(
            self.table, self.cursors, scope, source.index, source.partition, limit, cursor, **query
        )
        return Page(items=[convert(item) for item in found], next_cursor=next_cursor)

    def merged_of[T](
        self,
        convert: Callable[[dynamo.Item], T],
        scope: str,
        sources: Sequence[Source],
        limit: int,
        cursor: str | None,
        *,
        newest_first: bool = True,
    ) -> Page[T]:
        """``merged_page`` of ``sources`` on this table with this signer, each item made a value."""
        found, next_cursor = merged_page(
            self.table, self.cursors, scope, sources, limit, cursor, newest_first=newest_first
        )
        return Page(items=[convert(item) for item in found], next_cursor=next_cursor)


def merge(
    table: dynamo.Table,
    sources: Sequence[Source | None],
    limit: int,
    position: Any,
    *,
    newest_first: bool = True,
) -> tuple[list[dynamo.Item], dict[str, str] | None]:
    """``merged_page`` without the cursor's signature, for a pager whose cursor holds more than the
    merge (the sources it chose on its first page). A source that is None has nothing left to read. Raises
    InvalidCursor for a position that is not a merge's."""
    watermark, exhausted = _merge_position(position, len(sources))
    beyond: Callable[[Key], ConditionBase] | None = None
    if watermark is not None:
        beyond = (lambda sk: sk.lt(watermark)) if newest_first else (lambda sk: sk.gt(watermark))
    candidates: dict[str, tuple[int, dict[str, Any]]] = {}
    drained: set[int] = set()
    for number, source in enumerate(sources):
        if source is None or number in exhausted:
            drained.add(number)
            continue
        response = table.query(source.index, source.partition, where=beyond, forward=not newest_first, limit=limit + 1)
        if "LastEvaluatedKey" not in response:
            drained.add(number)
        for raw in response["Items"]:
            candidates.setdefault(raw[source.index.sort_key]["S"], (number, raw))

    ordered = sorted(candidates.items(), key=lambda candidate: candidate[0], reverse=newest_first)
    page, rest = ordered[:limit], ordered[limit:]
    # A source is exhausted once DynamoDB said so and the page took every item it answered.
    exhausted |= drained - {number for _, (number, _) in rest}
    more = bool(rest) or len(exhausted) < len(sources)
    next_position = {_WATERMARK: page[-1][0], _EXHAUSTED: _bits(exhausted)} if more and page else None
    now = dynamo.now_epoch()
    return [dynamo.deserialize(raw) for _, (_, raw) in page if not dynamo.expired(raw, now)], next_position


def _merge_position(position: Any, sources: int) -> tuple[str | None, set[int]]:
    if position is None:
        return None, set()
    if not isinstance(position, dict) or set(position) != {_WATERMARK, _EXHAUSTED}:
        raise InvalidCursor()
    watermark, bits = position[_WATERMARK], position[_EXHAUSTED]
    if not isinstance(watermark, str) or not isinstance(bits, str):
        raise InvalidCursor()
    try:
        mask = int(bits, 16) if bits else 0
    except ValueError:
        raise InvalidCursor() from None
    if mask >> sources:
        raise InvalidCursor()  # signed by us, but for more sources than these
    return watermark, {n for n in range(sources) if mask >> n & 1}


def _bits(numbers: set[int]) -> str:
    return format(sum(1 << n for n in numbers), "x")
