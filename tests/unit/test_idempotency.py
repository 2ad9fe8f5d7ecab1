"""Idempotency-Key: which requests count as the same, and what a used key answers."""

import pytest

from local.harness.builders import NOW
from shopfeed.platform import dynamo, idempotency
from shopfeed.platform.errors import IdempotencyKeyReused, MissingIdempotencyKey
from shopfeed.platform.idempotency import Created, IdempotentRequest, Snapshot
from shopfeed.platform.models import Model

BODY = {"lines": [{"product_id": "P-RED-TSHIRT", "quantity": 2}], "note": "gift"}


class Placed(Model):
    order_id: str
    status: str


class PlacedWithChannel(Model):
    """``Placed`` after a release added a required field."""

    order_id: str
    status: str
    channel: str


SNAPSHOT = Snapshot(Placed)
CREATED = Placed(order_id="01JQ8Z6V4C0000000000000000", status="Placed")


def request(
    key: str = "k-1", operation: str = "place-order", body: object = BODY, user: str = "U100"
) -> IdempotentRequest:
    return IdempotentRequest.of(user, key, operation, body)


def the_key_record(of: IdempotentRequest, value: Placed = CREATED) -> dynamo.Item:
    """The key item as stored by the first request (and handed back by ALL_OLD when reused)."""
    put = idempotency.record_put("CommerceTable", of, SNAPSHOT, value, NOW)
    return dynamo.deserialize(put["Put"]["Item"])


def test_the_fingerprint_ignores_the_order_of_json_members() -> None:
    reordered = {"note": "gift", "lines": [{"quantity": 2, "product_id": "P-RED-TSHIRT"}]}
    assert request(body=reordered).fingerprint == request().fingerprint


def test_the_fingerprint_differs_by_operation_and_by_body() -> None:
    fingerprints = {
        request().fingerprint,
        request(operation="restock:P-RED-TSHIRT").fingerprint,
        request(body=BODY | {"note": "not a gift"}).fingerprint,
    }
    assert len(fingerprints) == 3


def test_surrounding_whitespace_is_not_part_of_the_key() -> None:
    assert request(key="  k-1 ").key == "k-1"


@pytest.mark.parametrize(
    "key",
    [
        pytest.param(None, id="missing"),
        pytest.param("", id="empty"),
        pytest.param("   ", id="blank"),
        pytest.param("k" * 256, id="too-long"),
        pytest.param("k\n1", id="control-character"),
    ],
)
def test_a_create_without_a_usable_key_is_refused(key: str | None) -> None:
    with pytest.raises(MissingIdempotencyKey):
        IdempotentRequest.of("U100", key, "place-order", BODY)


def test_a_key_of_255_characters_is_accepted() -> None:
    assert request(key="k" * 255).key == "k" * 255


def test_keys_are_scoped_per_user() -> None:
    # when
    mine, theirs = the_key_record(request(user="U100")), the_key_record(request(user="U200"))
    again = the_key_record(request(user="U100"))
    # then
    assert (mine["PK"], mine["SK"]) != (theirs["PK"], theirs["SK"])
    assert (mine["PK"], mine["SK"]) == (again["PK"], again["SK"])


def test_the_key_record_is_written_only_if_the_key_is_new_and_expires_after_the_retention() -> None:
    # when
    put = idempotency.record_put("CommerceTable", request(), SNAPSHOT, CREATED, NOW)["Put"]
    # then: new, or its old record past its retention (TTL may take days to delete it)
    assert put["ConditionExpression"] == "attribute_not_exists(PK) OR #expires_at <= :now"
    assert put["ExpressionAttributeValues"] == {":now": {"N": str(int(NOW.timestamp()))}}
    assert put["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"
    assert dynamo.deserialize(put["Item"])["expires_at"] == int((NOW + idempotency.RETENTION).timestamp())


def test_a_new_key_has_nothing_to_replay() -> None:
    # when the key's Put went through (its reason is None) the request is answered normally
    assert idempotency.replay(request(), dynamo.Reason("None", None), SNAPSHOT) is None


def test_a_reused_key_with_the_same_request_replays_the_stored_response() -> None:
    # given
    first = request()
    # when
    replayed = idempotency.replay(request(), dynamo.Reason("ConditionalCheckFailed", the_key_record(first)), SNAPSHOT)
    # then
    assert replayed == Created(CREATED, replayed=True)


def test_a_reused_key_with_another_request_is_refused() -> None:
    # given
    first = request()
    reason = dynamo.Reason("ConditionalCheckFailed", the_key_record(first))
    # when / then
    with pytest.raises(IdempotencyKeyReused):
        idempotency.replay(request(body=BODY | {"note": "changed"}), reason, SNAPSHOT)


def test_a_failed_condition_without_the_old_item_is_not_a_replay() -> None:
    assert idempotency.replay(request(), dynamo.Reason("ConditionalCheckFailed", None), SNAPSHOT) is None


def test_a_value_stored_before_a_required_field_was_added_replays_through_the_upgrade() -> None:
    # given: a record written by the release before ``channel`` existed
    record = the_key_record(request())
    upgraded = Snapshot(PlacedWithChannel, version=2, upgrades={1: lambda value: {**value, "channel": "web"}})
    # when
    replayed = idempotency.replay(request(), dynamo.Reason("ConditionalCheckFailed", record), upgraded)
    # then
    assert replayed == Created(PlacedWithChannel(**CREATED.model_dump(), channel="web"), replayed=True)


def test_a_value_stored_with_a_field_the_model_dropped_still_replays() -> None:
    # given: a record written with a field the current model no longer has
    record = the_key_record(
        request(), PlacedWithChannel(order_id="01JQ8Z6V4C0000000000000000", status="Placed", channel="web")
    )  # type: ignore[arg-type]
    # when
    replayed = idempotency.replay(request(), dynamo.Reason("ConditionalCheckFailed", record), SNAPSHOT)
    # then
    assert replayed == Created(CREATED, replayed=True)


def test_a_record_written_before_snapshots_were_versioned_replays_as_version_zero() -> None:
    # given: the record shape of the previous release (the response body as JSON)
    legacy = {"fingerprint": request().fingerprint, "response_status": 201, "response_body": CREATED.model_dump_json()}
    # when
    replayed = idempotency.replay(request(), dynamo.Reason("ConditionalCheckFailed", legacy), SNAPSHOT)
    # then
    assert replayed == Created(CREATED, replayed=True)
