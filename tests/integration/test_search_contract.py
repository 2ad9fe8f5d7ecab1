"""The search port's contract: the same cases against the in-memory fake and each real engine.

``[in-memory]`` keeps the unit tests' fake honest, ``[osmem]`` is the embedded engine of the local stack,
``[opensearch]`` joins when SEARCH_CONTRACT_ENDPOINT names a real cluster (tests/support/search.py).
"""

import uuid

import pytest

from shopfeed.platform.search import (
    Outcome,
    Remove,
    SearchIndex,
    SearchMapping,
    SearchQuery,
    SearchWriteFailed,
    Upsert,
)
from tests.support.search import osmem_engine, osmem_url, search_index

__all__ = ["osmem_engine", "osmem_url", "search_index"]

FIELDS = ("name^3", "description")


@pytest.fixture
def spec() -> SearchMapping:
    # A fresh alias per test: a shared real cluster keeps what earlier runs wrote.
    return SearchMapping(
        alias=f"things-{uuid.uuid4().hex[:8]}",
        revision=1,
        fields={
            "thing_id": {"type": "keyword"},
            "name": {"type": "text"},
            "description": {"type": "text"},
            "category": {"type": "keyword"},
        },
        key_field="thing_id",
    )


def thing(thing_id: str, version: int, name: str = "plain", description: str = "", category: str = "misc") -> Upsert:
    body = {"thing_id": thing_id, "name": name, "description": description, "category": category}
    return Upsert(thing_id, version, body)


def ids(index: SearchIndex, spec: SearchMapping, text: str, size: int = 10, **filters: str) -> list[str]:
    index.refresh(spec)
    return [hit.doc_id for hit in index.search(spec, SearchQuery(text, FIELDS, size, filters)).hits]


def test_ensure_index_creates_the_alias_once(search_index: SearchIndex, spec: SearchMapping) -> None:
    # when
    first, second = search_index.ensure_index(spec), search_index.ensure_index(spec)
    # then
    assert (first, second) == (True, False)


def test_a_newer_version_replaces_the_document_and_an_older_or_equal_one_is_stale(
    search_index: SearchIndex, spec: SearchMapping
) -> None:
    # given
    search_index.write(spec, [thing("T1", 2, name="second")])
    # when
    outcomes = search_index.write(
        spec, [thing("T1", 1, name="first"), thing("T1", 2, name="again"), thing("T1", 3, name="third")]
    )
    # then
    assert outcomes == [Outcome.STALE, Outcome.STALE, Outcome.APPLIED]
    stored = search_index.get(spec, ["T1", "T-none"])
    assert list(stored) == ["T1"]
    assert (stored["T1"].version, stored["T1"].deleted, stored["T1"].body["name"]) == (3, False, "third")


def test_a_remove_leaves_a_tombstone_that_refuses_a_late_update(search_index: SearchIndex, spec: SearchMapping) -> None:
    # given
    search_index.write(spec, [thing("T1", 2, name="shirt")])
    # when
    outcomes = search_index.write(spec, [Remove("T1", 3), thing("T1", 3, name="shirt"), thing("T1", 2, name="shirt")])
    # then
    assert outcomes == [Outcome.APPLIED, Outcome.STALE, Outcome.STALE]
    tombstone = search_index.get(spec, ["T1"])["T1"]
    assert (tombstone.version, tombstone.deleted, dict(tombstone.body)) == (3, True, {})
    assert ids(search_index, spec, "shirt") == []


def test_a_remove_of_the_current_version_applies_and_of_an_older_one_is_stale(
    search_index: SearchIndex, spec: SearchMapping
) -> None:
    # given
    search_index.write(spec, [thing("T1", 4), thing("T2", 4)])
    # when
    outcomes = search_index.write(spec, [Remove("T1", 4), Remove("T2", 3), Remove("T1", 4)])
    # then: a redelivered remove is harmless
    assert outcomes == [Outcome.APPLIED, Outcome.STALE, Outcome.APPLIED]
    assert search_index.get(spec, ["T2"])["T2"].deleted is False


def test_a_remove_that_arrives_first_still_refuses_the_update_it_overtook(
    search_index: SearchIndex, spec: SearchMapping
) -> None:
    # when
    outcomes = search_index.write(spec, [Remove("T9", 2), thing("T9", 1, name="zombie")])
    # then
    assert outcomes == [Outcome.APPLIED, Outcome.STALE]
    assert search_index.get(spec, ["T9"])["T9"].deleted is True


def test_a_field_outside_the_mapping_fails_that_write_alone(search_index: SearchIndex, spec: SearchMapping) -> None:
    # given
    bad = Upsert("T2", 1, {"thing_id": "T2", "name": "x", "colour": "red"})
    # when
    outcomes = search_index.write(spec, [thing("T1", 1), bad, thing("T3", 1)])
    # then
    assert outcomes[0] == outcomes[2] == Outcome.APPLIED
    assert isinstance(outcomes[1], SearchWriteFailed)
    assert (outcomes[1].doc_id, outcomes[1].status) == ("T2", 400)


def test_search_orders_by_relevance_and_filters_by_keyword(search_index: SearchIndex, spec: SearchMapping) -> None:
    # given
    search_index.write(
        spec,
        [
            thing("A-DESC", 1, name="Crew neck", description="goes with a shirt", category="apparel"),
            thing("B-NAME", 1, name="Red shirt", description="cotton", category="apparel"),
            thing("C-HAT", 1, name="Shirt hat", description="odd", category="hats"),
            thing("D-NONE", 1, name="Cap", description="wool", category="apparel"),
        ],
    )
    # when
    apparel = ids(search_index, spec, "shirt", category="apparel")
    everything = ids(search_index, spec, "shirt")
    # then: a name match outranks a description match; the filter is exact
    assert apparel == ["B-NAME", "A-DESC"]
    assert set(everything) == {"A-DESC", "B-NAME", "C-HAT"}
    assert everything[-1] == "A-DESC"


def test_search_after_pages_through_every_match_once_in_order(search_index: SearchIndex, spec: SearchMapping) -> None:
    # given: seven equally relevant documents and three that do not match
    search_index.write(spec, [thing(f"T{n}", 1, name="blue mug") for n in range(7)])
    search_index.write(spec, [thing(f"X{n}", 1, name="red plate") for n in range(3)])
    search_index.refresh(spec)
    # when
    pages, after = [], None
    while True:
        page = search_index.search(spec, SearchQuery("mug", FIELDS, 3, after=after))
        pages.append([hit.doc_id for hit in page.hits])
        if page.next_after is None:
            break
        after = page.next_after
    # then: ties break on the key, pages never overlap, the last one is short or empty
    assert [doc for page in pages for doc in page] == [f"T{n}" for n in range(7)]
    assert [len(page) for page in pages] == [3, 3, 1]


def test_search_before_anything_was_indexed_answers_an_empty_page(
    search_index: SearchIndex, spec: SearchMapping
) -> None:
    # when
    page = search_index.search(spec, SearchQuery("anything", FIELDS, 5))
    # then
    assert (page.hits, page.next_after) == ([], None)


def test_a_rebuilt_index_replaces_the_live_one_under_the_same_alias(
    search_index: SearchIndex, spec: SearchMapping
) -> None:
    # given
    search_index.write(spec, [thing("OLD", 1, name="teapot")])
    # when
    search_index.create_index(spec, f"{spec.physical}-rebuild")
    search_index.fill(f"{spec.physical}-rebuild", [thing("NEW", 1, name="teapot")])
    dropped = search_index.move_alias(spec, f"{spec.physical}-rebuild")
    # then
    assert dropped == [spec.physical]
    assert ids(search_index, spec, "teapot") == ["NEW"]
    assert search_index.ensure_index(spec) is False
