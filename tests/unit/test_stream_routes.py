"""Routing a batch: a handler routed for several record types sees all of their records at once."""

from collections.abc import Sequence
from typing import Any

from shopfeed.platform import streams


def record(sequence_number: str, entity_type: str) -> dict[str, Any]:
    return {
        "eventName": "INSERT",
        "dynamodb": {
            "SequenceNumber": sequence_number,
            "ApproximateCreationDateTime": 1795341600,
            "Keys": {"PK": {"S": f"ITEM#{sequence_number}"}, "SK": {"S": "META"}},
            "NewImage": {"PK": {"S": f"ITEM#{sequence_number}"}, "entity_type": {"S": entity_type}},
        },
    }


def test_a_handler_routed_for_two_types_gets_both_types_records_in_one_call_in_batch_order() -> None:
    # given
    calls: list[list[str]] = []

    def count(changes: Sequence[streams.ItemChange]) -> streams.Failures:
        calls.append([change.sequence_number for change in changes])
        return {}

    routes = {"Post": count, "Follow": count}
    # when
    outcome = streams.route([record("1", "Post"), record("2", "Follow"), record("3", "Post")], routes)
    # then
    assert calls == [["1", "2", "3"]]
    assert outcome.response() == {"batchItemFailures": []}


def test_handlers_of_different_types_each_get_their_own_records() -> None:
    # given
    calls: dict[str, list[str]] = {}

    def handler_for(name: str) -> streams.RecordTypeHandler:
        def handle(changes: Sequence[streams.ItemChange]) -> streams.Failures:
            calls[name] = [change.sequence_number for change in changes]
            return {}

        return handle

    # when
    routes = {"Post": handler_for("posts"), "Follow": handler_for("follows")}
    streams.route([record("1", "Post"), record("2", "Follow")], routes)
    # then
    assert calls == {"posts": ["1"], "follows": ["2"]}


def test_a_type_with_two_handlers_gives_each_all_its_records_and_fails_a_record_either_failed() -> None:
    # given: posts count and are indexed; the counter fails record 1, the index record 3
    calls: dict[str, list[str]] = {}

    def failing(name: str, failed: str) -> streams.RecordTypeHandler:
        def handle(changes: Sequence[streams.ItemChange]) -> streams.Failures:
            calls[name] = [change.sequence_number for change in changes]
            return {failed: RuntimeError(name)}

        return handle

    routes: dict[str, streams.Route] = {
        "Post": (failing("count", "1"), failing("index", "3")),
        "Follow": failing("follows", "2"),
    }
    # when
    outcome = streams.route([record("1", "Post"), record("2", "Follow"), record("3", "Post")], routes)
    # then: in batch order, as Lambda resumes from the first
    assert calls == {"count": ["1", "3"], "index": ["1", "3"], "follows": ["2"]}
    assert outcome.response() == {
        "batchItemFailures": [{"itemIdentifier": "1"}, {"itemIdentifier": "2"}, {"itemIdentifier": "3"}]
    }
