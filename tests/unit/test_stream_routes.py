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
