"""Pages over DynamoDB queries, with one opaque signed cursor per page (see ``cursors``).

``query_page`` reads one partition of one index. ``merged_page`` reads several partitions at once
(the write shards of a hot index, or a timeline and the partitions of the authors it follows) and
merges them by sort key, k-way: one Query per source still holding items, one cursor remembering, per source,
the last item a page consumed or that the source is exhausted, so the next page resumes each one
exactly. Items compare by their source's sort key, so sources merged together must share its format
(for example ``<ISO time>#<id>``).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from boto3.dynamodb.conditions import ConditionBase, Key

from shopfeed.platform import dynamo
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.errors import InvalidCursor

_DONE: Final = "done"


def query_page(
    table: dynamo.Table,
    codec: CursorCodec,
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
    return [dynamo.deserialize(item) for item in raw], next_cursor


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
    cursor knows them by position. Raises InvalidCursor.
    """
    positions: dict[str, Any] = codec.decode(scope, cursor) or {str(n): None for n in range(len(sources))}
    if not isinstance(positions, dict) or set(positions) != {str(n) for n in range(len(sources))}:
        raise InvalidCursor()  # signed by us, but for another set of sources
    candidates: list[tuple[str, str, dict[str, Any]]] = []
    exhausted: dict[str, bool] = {}
    for name, position in positions.items():
        if position == _DONE:
            continue
        source = sources[int(name)]
        response = table.query(
            source.index, source.partition, forward=not newest_first, limit=limit + 1, start=position
        )
        exhausted[name] = "LastEvaluatedKey" not in response
        candidates += [(raw[source.index.sort_key]["S"], name, raw) for raw in response["Items"]]

    candidates.sort(key=lambda candidate: candidate[0], reverse=newest_first)
    page, rest = candidates[:limit], candidates[limit:]
    next_positions = dict(positions)
    for _, name, raw in page:
        next_positions[name] = {attribute: raw[attribute] for attribute in sources[int(name)].index.position_attributes}
    left_over = {name for _, name, _ in rest}
    for name, done in exhausted.items():
        if done and name not in left_over:
            next_positions[name] = _DONE
    more = any(position != _DONE for position in next_positions.values())
    return (
        [dynamo.deserialize(raw) for _, _, raw in page],
        codec.encode(scope, next_positions) if more else None,
    )
