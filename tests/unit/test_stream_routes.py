"""Routing a batch: a handler routed for several record types sees all of their records at once; an AWS
outage fails a handler's records, not the invocation."""

from collections.abc import Sequence
from typing import Any

import pytest
from botocore.exceptions import ClientError

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


def test_a_handler_stopped_by_an_aws_outage_fails_its_own_records_not_the_invocation() -> None:
    # given: the counter meets DynamoDB still throttling after the SDK's retries; the follows are fine
    def throttled(changes: Sequence[streams.ItemChange]) -> streams.Failures:
        raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException"}}, "TransactWriteItems")

    def fine(changes: Sequence[streams.ItemChange]) -> streams.Failures:
        return {}

    # when
    outcome = streams.route(
        [record("1", "Follow"), record("2", "Post"), record("3", "Post")], {"Post": throttled, "Follow": fine}
    )
    # then: a partial batch response (Lambda delivers them again), not a function error
    assert outcome.response() == {"batchItemFailures": [{"itemIdentifier": "2"}, {"itemIdentifier": "3"}]}


def test_a_handler_stopped_by_any_other_aws_error_fails_the_invocation() -> None:
    # given: a bug (a request DynamoDB refuses as malformed) is no outage to wait out
    def malformed(changes: Sequence[streams.ItemChange]) -> streams.Failures:
        raise ClientError({"Error": {"Code": "ValidationException"}}, "TransactWriteItems")

    # when / then: raised, with its trace, as Lambda reports a function error
    with pytest.raises(ClientError, match="ValidationException"):
        streams.route([record("1", "Post")], {"Post": malformed})
