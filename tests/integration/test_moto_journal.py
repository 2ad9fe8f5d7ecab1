"""The integration tier's moto undoes a cancelled transaction by a journal (tests/support/moto_backend.py):
what it leaves must be what real DynamoDB leaves, nothing."""

from typing import Any

import pytest
from botocore.exceptions import ClientError

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
