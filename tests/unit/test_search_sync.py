"""Search sync as a service: which records become which queued index writes, what a queued write looks
like on the wire, and how the worker applies them: which messages fail, and how long each is held back."""

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from local.harness.apigw import sample
from local.harness.builders import product
from shopfeed.commerce import items
from shopfeed.commerce.catalog.search import PRODUCT_PROJECTION, PRODUCTS
from shopfeed.feed.posts.search import POSTS
from shopfeed.platform.search import Remove, SearchMapping, SearchUnavailable, SearchWriteFailed, Upsert, Write
from shopfeed.platform.search.sync import (
    BACKOFF,
    IndexWrite,
    UnknownIndex,
    apply,
    apply_messages,
    queue_writes,
    write_for,
)
from shopfeed.platform.streams import ChangeKind, ItemChange
from tests.unit.search_fakes import InMemorySearchIndex, InMemoryWrites

AT = datetime(2026, 11, 23, tzinfo=UTC)
INDEXES = {spec.alias: spec for spec in (PRODUCTS, POSTS)}


class CountingIndex(InMemorySearchIndex):
    """The in-memory engine, counting the bulk requests it is sent."""

    def __init__(self) -> None:
        super().__init__()
        self.requests = 0

    def write(self, spec: SearchMapping, writes: Sequence[Write]) -> list[Any]:
        self.requests += 1
        return super().write(spec, writes)


def change(n: int, kind: ChangeKind, new: dict | None = None, old: dict | None = None) -> ItemChange:
    return ItemChange(f"{n:03d}", kind, {}, new, old, AT)


def product_item(product_id: str = "P-RED-TSHIRT", version: int = 1, **fields: object) -> dict:
    return items.product_item(product(product_id).model_copy(update={"version": version, **fields}))


def bodies(*writes: IndexWrite) -> dict[str, str]:
    """Queued writes as the worker receives them: JSON bodies by message id."""
    return {f"m-{n}": write.model_dump_json() for n, write in enumerate(writes)}


def upsert(product_id: str = "P-RED-TSHIRT", version: int = 1) -> IndexWrite:
    change_ = change(1, ChangeKind.INSERT, product_item(product_id, version))
    write = write_for(change_, PRODUCT_PROJECTION)
    assert write is not None
    return IndexWrite.of(PRODUCTS, write)


def sqs_event(*writes: IndexWrite, receives: int = 1) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": message_id,
                "receiptHandle": f"receipt-{message_id}",
                "body": body,
                "attributes": {"ApproximateReceiveCount": str(receives)},
            }
            for message_id, body in bodies(*writes).items()
        ]
    }


# -- the stream side: changes become queued writes ---------------------------------------------------


def test_a_product_change_is_queued_as_its_versioned_write_to_the_products_index() -> None:
    # given
    queue = InMemoryWrites()
    # when
    failures = queue_writes([change(1, ChangeKind.INSERT, product_item(version=3))], PRODUCT_PROJECTION, queue)
    # then
    (queued,) = queue.tasks
    assert failures == {}
    assert (queued.index, queued.doc_id, queued.version) == ("products", "P-RED-TSHIRT", 3)
    assert queued.body is not None
    assert queued.body["name"] == "P-Red-Tshirt"


def test_a_remove_is_queued_as_a_tombstone_at_the_removed_version() -> None:
    # given
    queue = InMemoryWrites()
    # when
    queue_writes([change(1, ChangeKind.REMOVE, None, product_item(version=4))], PRODUCT_PROJECTION, queue)
    # then
    assert queue.tasks == [IndexWrite(index="products", doc_id="P-RED-TSHIRT", version=4, body=None)]


def test_a_modify_that_keeps_the_version_queues_nothing() -> None:
    # given: a stock decrement changes available, not version
    queue = InMemoryWrites()
    before, after = product_item(version=2), product_item(version=2, available=1)
    # when
    failures = queue_writes([change(1, ChangeKind.MODIFY, after, before)], PRODUCT_PROJECTION, queue)
    # then
    assert (failures, queue.tasks) == ({}, [])


def test_an_image_that_is_not_a_product_fails_its_record_alone() -> None:
    # given
    queue = InMemoryWrites()
    broken = {k: v for k, v in product_item("P-BROKEN").items() if k != "name"}
    # when
    failures = queue_writes(
        [change(1, ChangeKind.INSERT, product_item()), change(2, ChangeKind.INSERT, broken)], PRODUCT_PROJECTION, queue
    )
    # then
    assert list(failures) == ["002"]
    assert isinstance(failures["002"], KeyError)
    assert [write.doc_id for write in queue.tasks] == ["P-RED-TSHIRT"]


def test_a_write_the_queue_refuses_fails_its_record() -> None:
    # when
    failures = queue_writes(
        [change(1, ChangeKind.INSERT, product_item())], PRODUCT_PROJECTION, InMemoryWrites(refuse=True)
    )
    # then
    assert list(failures) == ["001"]


def test_without_search_every_record_is_acknowledged() -> None:
    # when: the stack has no search, so no queue
    failures = queue_writes([change(1, ChangeKind.INSERT, product_item())], PRODUCT_PROJECTION, None)
    # then
    assert failures == {}


@pytest.mark.parametrize("write", [Upsert("P-1", 2, {"name": "Mug", "price": {"amount": 5}}), Remove("P-1", 3)])
def test_a_queued_write_reads_back_as_the_write_it_was(write: Write) -> None:
    # when
    body = IndexWrite.of(PRODUCTS, write).model_dump_json()
    # then
    assert IndexWrite.model_validate_json(body).write() == write


# -- the worker side: queued writes applied ----------------------------------------------------------


def test_writes_of_two_indexes_are_one_bulk_request_each_and_stale_ones_succeed() -> None:
    # given: a product at v2 already indexed; its v1 comes late
    engine = CountingIndex()
    apply(bodies(upsert(version=2)), INDEXES, engine)
    post = IndexWrite(index="posts", doc_id="01P", version=1, body={"post_id": "01P", "text": "hi", "tags": []})
    # when
    report = apply(bodies(upsert(version=1), upsert("P-MUG"), post), INDEXES, engine)
    # then
    assert (report.applied, report.stale, report.failures, engine.requests) == (2, 1, {}, 3)
    assert engine.documents(PRODUCTS)["P-RED-TSHIRT"].version == 2


def test_a_write_the_engine_refuses_fails_its_message_alone() -> None:
    # given: a mapping that lost a field the documents still carry
    engine = InMemorySearchIndex()
    narrow = {name: spec for name, spec in PRODUCTS.fields.items() if name != "description"}
    engine.ensure_index(replace(PRODUCTS, fields=narrow))
    # when
    report = apply(bodies(upsert()), INDEXES, engine)
    # then
    assert isinstance(report.failures["m-0"], SearchWriteFailed)
    assert (report.failures["m-0"].status, report.unavailable) == (400, 0)


def test_an_unreachable_engine_fails_every_message_and_is_asked_once() -> None:
    # given
    engine = CountingIndex()
    engine.down = True
    post = IndexWrite(index="posts", doc_id="01P", version=1, body=None)
    # when
    report = apply(bodies(upsert(), post), INDEXES, engine)
    # then
    assert sorted(report.failures) == ["m-0", "m-1"]
    assert all(isinstance(error, SearchUnavailable) for error in report.failures.values())
    assert (report.unavailable, engine.requests) == (2, 1)


@pytest.mark.parametrize("body", ['{"index": "products"}', "not json", '{"index":"orders","doc_id":"O","version":1}'])
def test_a_message_that_is_no_write_of_a_known_index_fails_alone(body: str) -> None:
    # given
    engine = InMemorySearchIndex()
    # when
    report = apply({"bad": body, **bodies(upsert())}, INDEXES, engine)
    # then
    assert (list(report.failures), report.applied) == (["bad"], 1)
    assert isinstance(report.failures["bad"], ValueError)
    if "orders" in body:
        assert isinstance(report.failures["bad"], UnknownIndex)


def test_a_tombstone_refuses_a_late_write_of_its_version() -> None:
    # given
    engine = InMemorySearchIndex()
    apply(bodies(IndexWrite(index="products", doc_id="P-RED-TSHIRT", version=4, body=None)), INDEXES, engine)
    # when
    report = apply(bodies(upsert(version=4)), INDEXES, engine)
    # then
    assert (report.applied, report.stale) == (0, 1)
    assert engine.documents(PRODUCTS)["P-RED-TSHIRT"].deleted is True


def test_while_the_engine_is_down_each_message_fails_and_is_held_back_by_its_receives() -> None:
    # given messages received for the fourth time
    engine = InMemorySearchIndex()
    engine.down = True
    queue = InMemoryWrites()
    # when
    response = apply_messages(sqs_event(upsert(), upsert("P-MUG"), receives=4), INDEXES, engine, queue)
    # then
    assert response == {"batchItemFailures": [{"itemIdentifier": "m-0"}, {"itemIdentifier": "m-1"}]}
    assert queue.held_back == {"receipt-m-0": BACKOFF.delay(4), "receipt-m-1": BACKOFF.delay(4)}
    assert BACKOFF.delay(4) == 80


def test_written_messages_are_neither_reported_nor_held_back() -> None:
    # given
    queue = InMemoryWrites()
    # when
    response = apply_messages(sqs_event(upsert()), INDEXES, InMemorySearchIndex(), queue)
    # then
    assert (response, queue.held_back) == ({"batchItemFailures": []}, {})


def test_without_an_engine_every_message_is_acknowledged() -> None:
    # given: search is off (no SEARCH_ENDPOINT)
    queue = InMemoryWrites()
    # when
    response = apply_messages(sqs_event(upsert()), INDEXES, None, queue)
    # then
    assert (response, queue.held_back) == ({"batchItemFailures": []}, {})


def test_the_sample_message_is_a_write_the_worker_applies() -> None:
    # given the sample event of events/sqs/ (sam local invoke sends it too)
    event = sample("sqs/search_sync_write.json")
    engine = InMemorySearchIndex()
    # when
    response = apply_messages(event, INDEXES, engine, InMemoryWrites())
    # then
    assert response == {"batchItemFailures": []}
    assert engine.documents(PRODUCTS)["P-RED-TSHIRT"].body["name"] == "Red T-Shirt"
