"""The search port: keep documents in a full-text index and query them by relevance.

The search sync worker writes, routes query, and neither knows the engine: Amazon OpenSearch Service in AWS,
an embedded OpenSearch-API engine locally (both through ``platform.search.opensearch``), an in-memory fake in
unit tests. The same contract suite runs against each.

**Never regress.** Stream records, and the writes queued from them, arrive at least once and out of order.
Every write carries the item's ``version`` as an *external* version: the engine applies it only if it
is newer than what the index holds, and answers ``STALE`` otherwise (not an error: something at least
as new is already there). A REMOVE does not delete the document but replaces it with a **tombstone**
(``deleted: true``) at the removed item's version, so a late MODIFY of that version or an older one is
refused; engines forget real deletes after ``index.gc_deletes`` (60 s by default), tombstones stay.
Queries never return tombstones; a rebuild (``make reindex``) drops them.

**Names.** Routes and the worker read and write the alias (``products``); the physical index carries
the mapping's revision (``products-v1``). A mapping change is a new revision built beside the old one,
then the alias moves in one call (docs/operations.md).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

# The port's error, declared with the other domain errors (the problem table imports it without the port).
from shopfeed.platform.errors import SearchUnavailable as SearchUnavailable

VERSION_FIELD = "version"
DELETED_FIELD = "deleted"
# Every index carries these next to its own fields: the external version read back, and the tombstone flag.
_BOOKKEEPING = {VERSION_FIELD: {"type": "long"}, DELETED_FIELD: {"type": "boolean"}}

MAX_PAGE_SIZE = 100


@dataclass(frozen=True)
class SearchMapping:
    """One searchable index: its alias, mapping revision and fields (the search engine's mapping; a
    DynamoDB index is ``dynamo.IndexSpec``).

    ``fields`` is the mapping's ``properties``; ``key_field`` is a keyword field unique per document
    (the document id), the tie-breaker that makes relevance order total for ``search_after``.
    """

    alias: str
    revision: int
    fields: Mapping[str, Any]
    key_field: str
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def physical(self) -> str:
        return f"{self.alias}-v{self.revision}"

    def mapping(self) -> dict[str, Any]:
        # strict: a field the mapping does not know is a bug to surface, not a type to guess.
        return {"dynamic": "strict", "properties": {**self.fields, **_BOOKKEEPING}}


@dataclass(frozen=True)
class Upsert:
    """Index ``body`` as document ``doc_id`` at ``version`` unless the index holds that version or newer."""

    doc_id: str
    version: int
    body: Mapping[str, Any]


@dataclass(frozen=True)
class Remove:
    """Leave a tombstone for ``doc_id`` at ``version`` (the removed item's last version) unless the
    index holds a newer version. An upsert of ``version`` or older is refused from then on."""

    doc_id: str
    version: int


Write = Upsert | Remove


class Outcome(StrEnum):
    APPLIED = "applied"
    STALE = "stale"  # the index already holds this version or a newer one: nothing to do


class SearchWriteFailed(Exception):
    """The engine refused one write for another reason than its version (mapping, overload, outage)."""

    def __init__(self, doc_id: str, status: int, reason: str) -> None:
        super().__init__(f"{doc_id}: {status} {reason}")
        self.doc_id = doc_id
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class StoredDocument:
    """What the index holds for one id: the body (empty for a tombstone) and its version."""

    doc_id: str
    version: int
    deleted: bool
    body: Mapping[str, Any]


@dataclass(frozen=True)
class SearchQuery:
    """Free text over weighted fields (``"name^3"``), exact filters on keyword fields, one page.

    ``after`` is the previous page's ``SearchPage.next_after`` (OpenSearch ``search_after``).
    """

    text: str
    fields: Sequence[str]
    size: int
    filters: Mapping[str, str] = field(default_factory=dict)
    after: Sequence[Any] | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.size <= MAX_PAGE_SIZE:
            raise ValueError(f"page size {self.size} is outside 1..{MAX_PAGE_SIZE}")


@dataclass(frozen=True)
class SearchHit:
    doc_id: str
    score: float
    body: Mapping[str, Any]


@dataclass(frozen=True)
class SearchPage:
    hits: list[SearchHit]
    # The sort values of the last hit when the page is full (there may be more), else None.
    next_after: list[Any] | None


class SearchIndex(Protocol):
    """A search engine holding the indexes of ``SearchMapping``s."""

    def ensure_index(self, spec: SearchMapping) -> bool:
        """Create the physical index and point the alias at it, unless the alias exists (whatever its
        revision: moving it is a rebuild's job). True if it was created."""
        ...

    def write(self, spec: SearchMapping, writes: Sequence[Write]) -> list[Outcome | SearchWriteFailed]:
        """Apply the writes in order, each judged on its own; the answer is aligned with ``writes``.
        Raises SearchUnavailable when the request as a whole failed."""
        ...

    def get(self, spec: SearchMapping, doc_ids: Sequence[str]) -> dict[str, StoredDocument]:
        """The stored documents (tombstones included) of those ids that the index holds."""
        ...

    def search(self, spec: SearchMapping, query: SearchQuery) -> SearchPage:
        """Live documents matching the query, most relevant first (ties by ``key_field``)."""
        ...

    def refresh(self, spec: SearchMapping) -> None:
        """Make every write so far visible to search now (tests, the end of a rebuild)."""
        ...

    def warm_up(self, spec: SearchMapping) -> None:
        """Open what the first search would open (the engine's connection), within a short bound; never
        raises: an engine that fails it is the first search's to report."""
        ...

    # A rebuild fills a new index beside the live one, then moves the alias (make reindex).

    def create_index(self, spec: SearchMapping, name: str) -> None:
        """Create index ``name`` with the spec's mapping and no alias (fails if it exists)."""
        ...

    def fill(self, name: str, writes: Sequence[Write]) -> list[Outcome | SearchWriteFailed]:
        """``write`` aimed at an index (or alias) by name, creating nothing on the way."""
        ...

    def move_alias(self, spec: SearchMapping, to: str) -> list[str]:
        """Point the alias at index ``to`` alone in one atomic step, delete the indexes it left and
        answer their names."""
        ...


def document(write: Write) -> dict[str, Any]:
    """The stored source of a write: the body plus the bookkeeping fields (a tombstone has no body)."""
    if isinstance(write, Remove):
        return {VERSION_FIELD: write.version, DELETED_FIELD: True}
    return {**write.body, VERSION_FIELD: write.version, DELETED_FIELD: False}


def stored(doc_id: str, source: Mapping[str, Any]) -> StoredDocument:
    """A stored source read back, split into body and bookkeeping."""
    body = {k: v for k, v in source.items() if k not in _BOOKKEEPING}
    return StoredDocument(doc_id, int(source[VERSION_FIELD]), bool(source.get(DELETED_FIELD)), body)
