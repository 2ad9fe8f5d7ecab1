"""Search sync as a service: which records become which index writes, and which fail on their own."""

from dataclasses import replace
from datetime import UTC, datetime

from local.harness.builders import product
from shopfeed.commerce import items
from shopfeed.commerce.catalog.search import PRODUCT_PROJECTION, PRODUCTS
from shopfeed.platform.search import SearchUnavailable, SearchWriteFailed
from shopfeed.platform.search.sync import sync
from shopfeed.platform.streams import ChangeKind, ItemChange
from tests.unit.search_fakes import InMemorySearchIndex

AT = datetime(2026, 11, 23, tzinfo=UTC)


def change(n: int, kind: ChangeKind, new: dict | None = None, old: dict | None = None) -> ItemChange:
    return ItemChange(f"{n:03d}", kind, {}, new, old, AT)


def product_item(product_id: str = "P-RED-TSHIRT", version: int = 1, **fields: object) -> dict:
    return items.product_item(product(product_id).model_copy(update={"version": version, **fields}))


def test_a_modify_that_keeps_the_version_writes_nothing() -> None:
    # given: a stock decrement changes available, not version
    index = InMemorySearchIndex()
    before, after = product_item(version=2), product_item(version=2, available=1)
    # when
    report = sync([change(1, ChangeKind.MODIFY, after, before)], PRODUCT_PROJECTION, index)
    # then
    assert (report.applied, report.skipped, index.documents(PRODUCTS)) == (0, 1, {})


def test_an_image_that_is_not_a_product_fails_its_record_alone() -> None:
    # given
    index = InMemorySearchIndex()
    broken = {k: v for k, v in product_item("P-BROKEN").items() if k != "name"}
    # when
    report = sync(
        [change(1, ChangeKind.INSERT, product_item()), change(2, ChangeKind.INSERT, broken)], PRODUCT_PROJECTION, index
    )
    # then
    assert (report.applied, list(report.failures)) == (1, ["002"])
    assert isinstance(report.failures["002"], KeyError)


def test_a_write_the_engine_refuses_fails_its_record_alone() -> None:
    # given: a mapping that lost a field the documents still carry
    index = InMemorySearchIndex()
    narrow = {name: spec for name, spec in PRODUCTS.fields.items() if name != "description"}
    index.ensure_index(replace(PRODUCTS, fields=narrow))
    # when
    report = sync([change(1, ChangeKind.INSERT, product_item())], PRODUCT_PROJECTION, index)
    # then
    assert isinstance(report.failures["001"], SearchWriteFailed)
    assert report.failures["001"].status == 400


def test_an_unreachable_engine_fails_every_record_that_had_a_write() -> None:
    # given
    index = InMemorySearchIndex()
    index.down = True
    same_version = change(3, ChangeKind.MODIFY, product_item(version=1), product_item(version=1))
    # when
    report = sync([change(1, ChangeKind.INSERT, product_item()), same_version], PRODUCT_PROJECTION, index)
    # then
    assert list(report.failures) == ["001"]
    assert isinstance(report.failures["001"], SearchUnavailable)


def test_a_remove_leaves_a_tombstone_at_the_removed_version() -> None:
    # given
    index = InMemorySearchIndex()
    sync([change(1, ChangeKind.INSERT, product_item(version=4))], PRODUCT_PROJECTION, index)
    # when
    report = sync([change(2, ChangeKind.REMOVE, None, product_item(version=4))], PRODUCT_PROJECTION, index)
    # then
    assert report.applied == 1
    tombstone = index.documents(PRODUCTS)["P-RED-TSHIRT"]
    assert (tombstone.version, tombstone.deleted) == (4, True)
    late = sync(
        [change(3, ChangeKind.MODIFY, product_item(version=4), product_item(version=3))], PRODUCT_PROJECTION, index
    )
    assert (late.applied, late.stale) == (0, 1)
