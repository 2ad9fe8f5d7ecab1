"""The integration tier's moto (tests/support/moto_backend.py) undoes a cancelled transaction by a journal:
what it leaves must be what real DynamoDB leaves, nothing. And it answers plain attribute values as
they are held: the answers must be those of moto's own walk through the model."""

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.core.serialize import BaseJSONSerializer

from shopfeed.platform import clients
from tests.integration.outbox_support import CommerceStream

TABLE = "CommerceTable"


def key(sk: str) -> dict[str, Any]:
    return {"PK": {"S": "JOURNAL#1"}, "SK": {"S": sk}}


def stream_records() -> list[dict[str, Any]]:
    return CommerceStream(TABLE).read()


def test_a_cancelled_transaction_leaves_every_item_and_the_stream_as_they_were(aws: None) -> None:
    # given an item to update, one to delete, and the stream records of writing them
    dynamodb = clients.dynamodb()
    dynamodb.put_item(TableName=TABLE, Item=key("KEPT") | {"n": {"N": "1"}, "tags": {"SS": ["a"]}})
    dynamodb.put_item(TableName=TABLE, Item=key("GONE") | {"n": {"N": "1"}})
    before = stream_records()
    # when a transaction puts, updates and deletes, then fails its last condition
    with pytest.raises(ClientError) as cancelled:
        dynamodb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": key("NEW") | {"n": {"N": "1"}}}},
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": key("KEPT"),
                        "UpdateExpression": "ADD n :one, tags :b",
                        "ExpressionAttributeValues": {":one": {"N": "1"}, ":b": {"SS": ["b"]}},
                    }
                },
                {"Delete": {"TableName": TABLE, "Key": key("GONE")}},
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": key("MISSING"),
                        "ConditionExpression": "attribute_exists(PK)",
                    }
                },
            ]
        )
    # then it is cancelled and every item, and the stream, is as before
    assert cancelled.value.response["Error"]["Code"] == "TransactionCanceledException"
    items = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": "JOURNAL#1"}},
        ConsistentRead=True,
    )["Items"]
    assert sorted((i["SK"]["S"], i["n"]["N"], i.get("tags", {}).get("SS")) for i in items) == [
        ("GONE", "1", None),
        ("KEPT", "1", ["a"]),
    ]
    assert stream_records() == before


def test_a_transaction_that_succeeds_is_applied_whole(aws: None) -> None:
    # given an item
    dynamodb = clients.dynamodb()
    dynamodb.put_item(TableName=TABLE, Item=key("KEPT") | {"n": {"N": "1"}})
    # when a transaction updates it and puts another
    dynamodb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": TABLE, "Item": key("NEW") | {"n": {"N": "7"}}}},
            {
                "Update": {
                    "TableName": TABLE,
                    "Key": key("KEPT"),
                    "UpdateExpression": "ADD n :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                }
            },
        ]
    )
    # then both are written, each with its stream record
    got = {sk: dynamodb.get_item(TableName=TABLE, Key=key(sk))["Item"]["n"]["N"] for sk in ("KEPT", "NEW")}
    assert got == {"KEPT": "2", "NEW": "7"}
    assert [r["eventName"] for r in stream_records()][-2:] == ["INSERT", "MODIFY"]


def test_answers_with_attribute_values_as_held_are_moto_s_own(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # given an item with every type of attribute value, binary ones (which take moto's walk) too
    dynamodb = clients.dynamodb()
    every_type = {
        "s": {"S": "text"},
        "n": {"N": "12.5"},
        "t": {"BOOL": True},
        "z": {"NULL": True},
        "ss": {"SS": ["a", "b"]},
        "ns": {"NS": ["1", "2"]},
        "b": {"B": b"\x00bytes"},
        "bs": {"BS": [b"x", b"y"]},
        "m": {"M": {"inner": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"deep": {"BOOL": False}}}]}}},
        "l_with_b": {"L": [{"S": "x"}, {"B": b"y"}]},
        "empty_l": {"L": []},
        "empty_m": {"M": {}},
    }
    dynamodb.put_item(TableName=TABLE, Item=key("EVERY") | every_type)
    dynamodb.put_item(TableName=TABLE, Item=key("PLAIN") | {"n": {"N": "1"}, "s": {"S": "x"}})

    def answers() -> list[Any]:
        """Each read's answer as moto wrote it (the JSON body, before botocore drops what it does not
        know). The hook comes off again: the worker's tests share this client."""
        bodies: list[Any] = []

        def keep(response_dict: dict[str, Any], **_: Any) -> None:
            bodies.append(json.loads(response_dict["body"]))

        dynamodb.meta.events.register("before-parse.dynamodb.*", keep)
        try:
            dynamodb.get_item(TableName=TABLE, Key=key("EVERY"), ReturnConsumedCapacity="TOTAL")
            dynamodb.query(
                TableName=TABLE,
                KeyConditionExpression="PK = :pk",
                ExpressionAttributeValues={":pk": {"S": "JOURNAL#1"}},
                Limit=1,
            )
            dynamodb.batch_get_item(RequestItems={TABLE: {"Keys": [key("EVERY"), key("PLAIN")]}})
            dynamodb.update_item(
                TableName=TABLE,
                Key=key("PLAIN"),
                UpdateExpression="SET s = :s",
                ExpressionAttributeValues={":s": {"S": "x"}},
                ReturnValues="ALL_NEW",
            )
        finally:
            dynamodb.meta.events.unregister("before-parse.dynamodb.*", keep)
        return bodies

    # when the same reads are answered as held, then walked through the model as moto does
    assert getattr(BaseJSONSerializer._serialize_type_structure, "plain", False)
    held = answers()
    walked = BaseJSONSerializer._serialize_type_structure.walked  # type: ignore[attr-defined]
    monkeypatch.setattr(BaseJSONSerializer, "_serialize_type_structure", walked)
    # then they are the same, every attribute type as it was written
    assert answers() == held
    assert dynamodb.get_item(TableName=TABLE, Key=key("EVERY"))["Item"] == key("EVERY") | every_type
