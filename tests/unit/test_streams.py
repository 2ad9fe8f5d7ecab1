"""Stream records as Lambda delivers them, parsed into typed changes."""

import base64
import copy
from typing import Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from local.harness.apigw import sample
from shopfeed.platform import streams


def record(**dynamodb: Any) -> dict[str, Any]:
    raw = copy.deepcopy(sample("streams/commerce_outbox_order_placed.json")["Records"][0])
    raw["dynamodb"] |= dynamodb
    return dict(raw)


def test_binary_attributes_arrive_base64_encoded_and_parse_to_bytes_at_any_depth() -> None:
    # given: an item with a binary attribute, and one inside a map (Lambda's event JSON)
    encoded = base64.b64encode(b"\x78\x9c\x01").decode()
    raw = record(NewImage={"PK": {"S": "K"}, "blob": {"B": encoded}, "nested": {"M": {"blobs": {"BS": [encoded]}}}})
    # when
    change = streams.parse(DynamoDBRecord(raw))
    # then
    assert change.new_image == {"PK": "K", "blob": b"\x78\x9c\x01", "nested": {"blobs": {b"\x78\x9c\x01"}}}


def test_a_remove_has_only_the_old_image_and_is_typed_by_it() -> None:
    # given: what TTL expiry of an outbox item sends
    raw = record()
    raw["eventName"] = "REMOVE"
    raw["dynamodb"]["OldImage"] = raw["dynamodb"].pop("NewImage")
    # when
    change = streams.parse(DynamoDBRecord(raw))
    # then
    assert change.kind is streams.ChangeKind.REMOVE
    assert change.new_image is None
    assert change.image == change.old_image
    assert change.entity_type == "OutboxEvent"
