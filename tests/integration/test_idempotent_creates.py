"""Commerce's creates under the Idempotency-Key contract, and replays across a model change."""

import zlib
from typing import Any

import pytest

from local.harness.client import Answer, ApiClient
from local.harness.factories import create_product, line, order_body, product_body
from local.harness.tables import table_items
from shopfeed.commerce.models import Order
from shopfeed.commerce.orders import repository
from shopfeed.platform import clients, dynamo, idempotency
from shopfeed.platform.idempotency import Snapshot
from tests.support.idempotent_create import IdempotentCreate, check_idempotent_create


def stock_of(client: ApiClient) -> int:
    return int(client.get("/products/P-RED-TSHIRT").json["available"])


def orders_of(client: ApiClient) -> int:
    return len(client.get("/users/me/orders").json["items"])


CASES = [
    IdempotentCreate(
        name="place-order",
        path="/orders",
        body=order_body(line("P-RED-TSHIRT", 2)),
        other_body=order_body(line("P-RED-TSHIRT", 3)),
        effect=lambda client: (orders_of(client), stock_of(client)),
    ),
    IdempotentCreate(
        name="restock",
        path="/products/P-RED-TSHIRT/stock",
        body={"quantity": 5},
        other_body={"quantity": 6},
        effect=stock_of,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_create_keeps_the_idempotency_key_contract(case: IdempotentCreate, admin: ApiClient) -> None:
    # given: an admin (restock is theirs), a product in stock
    create_product(admin, "P-RED-TSHIRT", available=50)
    # when / then
    check_idempotent_create(case, admin, admin.as_user("U-OTHER-ADMIN", "admin"))


class OrderWithChannel(Order):
    """``Order`` as a later release might declare it: a new required field."""

    channel: str


def with_channel(order: dict[str, object]) -> dict[str, object]:
    return {**order, "channel": "web"}


@pytest.mark.parametrize(
    "later",
    [
        pytest.param(
            Snapshot(OrderWithChannel, version=2, upgrades={1: lambda o: {**o, "channel": "web"}}), id="required"
        ),
        pytest.param(Snapshot(Order, version=1), id="unchanged"),
    ],
)
def test_a_replay_after_a_field_was_added_to_order_answers_the_same_201_body(
    commerce_api: ApiClient, admin: ApiClient, monkeypatch: pytest.MonkeyPatch, later: Snapshot[Order]
) -> None:
    # given: an order placed by the release before the field existed
    admin.post("/products", product_body("P-RED-TSHIRT", available=5))
    key = {"Idempotency-Key": "before-the-release"}
    first = commerce_api.post("/orders", order_body(line("P-RED-TSHIRT", 2)), headers=key)
    assert first.status == 201
    # when: the next release, whose Order has one more field, gets the client's retry
    monkeypatch.setattr(repository, "ORDER_SNAPSHOT", later)
    retried = commerce_api.post("/orders", order_body(line("P-RED-TSHIRT", 2)), headers=key)
    # then
    assert retried.status == 201, retried.text
    assert retried.json == first.json
    assert retried.headers["Idempotent-Replayed"] == "true"


def key_records() -> list[dict[str, Any]]:
    return [item for item in table_items() if item["entity_type"] == idempotency.ENTITY_TYPE]


def order_with_key(commerce_api: ApiClient, admin: ApiClient, key: str) -> tuple[Answer, dict[str, Any]]:
    """An order of 2 of 5 shirts placed with ``key``, and its key record as stored."""
    admin.post("/products", product_body("P-RED-TSHIRT", available=5))
    first = commerce_api.post("/orders", order_body(line("P-RED-TSHIRT", 2)), headers={"Idempotency-Key": key})
    [record] = key_records()
    return first, record


def test_a_replay_of_a_key_recorded_by_the_previous_release_answers_the_same_201_body(
    commerce_api: ApiClient, admin: ApiClient
) -> None:
    # given: an order whose key record has the previous release's shape (the response body, unversioned)
    first, record = order_with_key(commerce_api, admin, "recorded-before-snapshots")
    legacy = {k: v for k, v in record.items() if k not in ("snapshot", "snapshot_version")}
    legacy |= {"response_status": 201, "response_body": zlib.decompress(record["snapshot"]).decode()}
    clients.dynamodb().put_item(TableName="CommerceTable", Item=dynamo.serialize(legacy))
    # when
    key = {"Idempotency-Key": "recorded-before-snapshots"}
    retried = commerce_api.post("/orders", order_body(line("P-RED-TSHIRT", 2)), headers=key)
    # then
    assert retried.status == 201, retried.text
    assert retried.json == first.json
    assert retried.headers["Idempotent-Replayed"] == "true"


def test_a_key_whose_record_is_past_its_retention_is_new_again_though_ttl_has_not_deleted_it(
    commerce_api: ApiClient, admin: ApiClient
) -> None:
    # given an order placed with a key, whose record's retention has passed (TTL lags: still stored)
    first, record = order_with_key(commerce_api, admin, "reused-next-month")
    expired = record | {"expires_at": dynamo.now_epoch() - 1}
    clients.dynamodb().put_item(TableName="CommerceTable", Item=dynamo.serialize(expired))
    # when the key comes again
    key = {"Idempotency-Key": "reused-next-month"}
    again = commerce_api.post("/orders", order_body(line("P-RED-TSHIRT", 2)), headers=key)
    # then it places a new order (the old record is replaced), as it would once TTL had deleted it
    assert (first.status, again.status) == (201, 201), again.text
    assert again.headers.get("Idempotent-Replayed") is None
    assert again.json["order_id"] != first.json["order_id"]
    assert stock_of(admin) == 1
    [renewed] = key_records()
    assert int(renewed["expires_at"]) > dynamo.now_epoch()
