"""An in-memory SearchIndex: external versions, tombstones, strict mappings, relevance order, search_after;
and the search sync queue in memory.

tests/integration/test_search_contract.py runs the same cases against it and the real engines. Its
relevance is a plain term count per field times the field's boost: enough to order a name match
before a description match, which is all the contract asserts about scores.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shopfeed.platform.search import (
    DELETED_FIELD,
    VERSION_FIELD,
    Outcome,
    Remove,
    SearchHit,
    SearchMapping,
    SearchPage,
    SearchQuery,
    SearchUnavailable,
    SearchWriteFailed,
    StoredDocument,
    Write,
    document,
    stored,
)
from shopfeed.platform.search.sync import IndexWrite
from tests.unit.queue_fakes import InMemoryQueue

_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class InMemorySearchIndex:
    def __init__(self) -> None:
        self.indexes: dict[str, tuple[SearchMapping, dict[str, dict[str, Any]]]] = {}
        self.aliases: dict[str, str] = {}
        self.down = False  # an outage: every request raises SearchUnavailable

    def _check(self) -> None:
        if self.down:
            raise SearchUnavailable("search engine unreachable")

    def _resolve(self, name: str) -> tuple[SearchMapping, dict[str, dict[str, Any]]] | None:
        return self.indexes.get(self.aliases.get(name, name))

    def ensure_index(self, spec: SearchMapping) -> bool:
        self._check()
        if spec.alias in self.aliases:
            return False
        self.create_index(spec, spec.physical)
        self.aliases[spec.alias] = spec.physical
        return True

    def write(self, spec: SearchMapping, writes: Sequence[Write]) -> list[Outcome | SearchWriteFailed]:
        if writes:
            self.ensure_index(spec)
        return self.fill(spec.alias, writes)

    def fill(self, name: str, writes: Sequence[Write]) -> list[Outcome | SearchWriteFailed]:
        self._check()
        target = self._resolve(name)
        if target is None:
            raise SearchUnavailable(f"no index {name}")
        spec, documents = target
        return [self._apply(spec, documents, write) for write in writes]

    @staticmethod
    def _apply(spec: SearchMapping, documents: dict[str, dict[str, Any]], write: Write) -> Outcome | SearchWriteFailed:
        unknown = set(document(write)) - set(spec.mapping()["properties"])
        if unknown:
            return SearchWriteFailed(write.doc_id, 400, f"strict_dynamic_mapping_exception: {sorted(unknown)}")
        current = documents.get(write.doc_id)
        if current is not None:
            held = int(current[VERSION_FIELD])
            newer = write.version >= held if isinstance(write, Remove) else write.version > held
            if not newer:
                return Outcome.STALE
        documents[write.doc_id] = document(write)
        return Outcome.APPLIED

    def get(self, spec: SearchMapping, doc_ids: Sequence[str]) -> dict[str, StoredDocument]:
        self._check()
        target = self._resolve(spec.alias)
        documents = target[1] if target else {}
        return {doc_id: stored(doc_id, documents[doc_id]) for doc_id in doc_ids if doc_id in documents}

    def search(self, spec: SearchMapping, query: SearchQuery) -> SearchPage:
        self._check()
        target = self._resolve(spec.alias)
        if target is None:
            return SearchPage([], None)
        scored = []
        for doc_id, source in target[1].items():
            if source.get(DELETED_FIELD) or not all(_matches(source.get(f), v) for f, v in query.filters.items()):
                continue
            score = self._score(spec, source, query)
            if score > 0:
                scored.append((-score, str(source[spec.key_field]), doc_id, source))
        scored.sort(key=lambda row: (row[0], row[1]))
        if query.after is not None:
            after = (-float(query.after[0]), str(query.after[1]))
            scored = [row for row in scored if (row[0], row[1]) > after]
        page = scored[: query.size]
        hits = [SearchHit(doc_id, -neg, stored(doc_id, source).body) for neg, _, doc_id, source in page]
        full = len(page) == query.size
        return SearchPage(hits, [-page[-1][0], page[-1][1]] if full else None)

    @staticmethod
    def _score(spec: SearchMapping, source: Mapping[str, Any], query: SearchQuery) -> float:
        terms = _words(query.text)
        score = 0.0
        for weighted in query.fields:
            name, _, boost = weighted.partition("^")
            value = source.get(name)
            if not isinstance(value, str):
                continue
            if spec.fields.get(name, {}).get("type") == "keyword":
                matched = 1 if value == query.text else 0
            else:
                words = _words(value)
                matched = sum(words.count(term) for term in terms)
            score += matched * float(boost or 1)
        return score

    def warm_up(self, spec: SearchMapping) -> None:
        pass  # nothing to connect to

    def refresh(self, spec: SearchMapping) -> None:
        self._check()

    def create_index(self, spec: SearchMapping, name: str) -> None:
        self._check()
        if name in self.indexes:
            raise SearchUnavailable(f"index {name} exists")
        self.indexes[name] = (spec, {})

    def move_alias(self, spec: SearchMapping, to: str) -> list[str]:
        self._check()
        previous = [name for alias, name in self.aliases.items() if alias == spec.alias and name != to]
        self.aliases[spec.alias] = to
        for name in previous:
            del self.indexes[name]
        return previous

    def documents(self, spec: SearchMapping) -> dict[str, StoredDocument]:
        """Everything the alias holds, tombstones included (assertions)."""
        target = self._resolve(spec.alias)
        return {doc_id: stored(doc_id, source) for doc_id, source in (target[1] if target else {}).items()}


def _matches(field: Any, value: str) -> bool:
    # A term filter on an array field (a post's tags) matches any of its values, as in OpenSearch.
    return value in field if isinstance(field, list) else bool(field == value)


@dataclass
class InMemoryWrites(InMemoryQueue[IndexWrite]):
    """The search sync queue: the writes sent (``tasks``), and how long each received one was held back."""

    held_back: dict[str, int] = field(default_factory=dict)  # receipt handle → seconds

    def retry_after(self, delays: Mapping[str, int]) -> dict[str, str]:
        self.held_back |= delays
        return {}
