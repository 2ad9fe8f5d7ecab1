"""Shipments over HTTP against moto: ops create parcels of paid orders and move them with If-Match, the
order moves with them where its state machine admits it, ECOM-008 and ECOM-010 read the two indexes."""

from typing import Any

import pytest

from local.harness.client import Answer, ApiClient
from local.harness.factories import idempotency_key, if_match, line, pages, placed_order
from local.harness.tables import table_items
from shopfeed.commerce import events, items, keys
from shopfeed.platform import clients, dynamo
from tests.support.calls import dynamodb_calls
from tests.support.payments import PaymentChain

pytestmark = pytest.mark.usefixtures("shop")

NOT_SHIPPABLE = "https://shopfeed.dev/problems/order-not-shippable"


@pytest.fixture
def paid(commerce_api: ApiClient, payment_chain: PaymentChain) -> dict[str, Any]:
    """An order of U100 paid through the payment chain (the sandbox approves it)."""
    return paid_order(commerce_api, payment_chain)


def paid_order(client: ApiClient, chain: PaymentChain) -> dict[str, Any]:
    order = placed_order(client, line())
    body = {"amount": order["total"], "payment_method": "tok_sandbox_visa"}
    assert client.post(f"/orders/{order['order_id']}/payments", body, headers=idempotency_key()).status == 202
    chain.run()
    paid = client.get(f"/orders/{order['order_id']}").json
    assert paid["status"] == "Paid"
    return dict(paid)


def ship(ops: ApiClient, order: dict[str, Any], carrier: str = "dhl", key: str | None = None) -> Answer:
    headers = {"Idempotency-Key": key} if key else idempotency_key()
    return ops.post(
        f"/orders/{order['order_id']}/shipments", {"carrier": carrier, "tracking_number": "JD0001"}, headers=headers
    )


def shipped(ops: ApiClient, order: dict[str, Any], carrier: str = "dhl") -> dict[str, Any]:
    answer = ship(ops, order, carrier)
    assert answer.status == 201, answer.text
    return dict(answer.json)


def move(ops: ApiClient, shipment: dict[str, Any], status: str, version: int | None = None) -> Answer:
    path = f"/orders/{shipment['order_id']}/shipments/{shipment['shipment_id']}"
    etag = f'"{version if version is not None else shipment["version"]}"'
    return ops.patch(path, {"status": status}, headers=if_match(etag))


def moved(ops: ApiClient, shipment: dict[str, Any], status: str) -> dict[str, Any]:
    answer = move(ops, shipment, status)
    assert answer.status == 200, answer.text
    return dict(answer.json)


def order_status(client: ApiClient, order: dict[str, Any]) -> str:
    return str(client.get(f"/orders/{order['order_id']}").json["status"])


def outbox(event_type: str) -> list[dict[str, Any]]:
    return [i for i in table_items() if i["entity_type"] == items.OUTBOX_EVENT and i["event_type"] == event_type]


# -- creating --------------------------------------------------------------------------------------


def test_ops_create_a_shipment_of_a_paid_order_in_two_round_trips(ops: ApiClient, paid: dict[str, Any]) -> None:
    # when
    with dynamodb_calls() as calls:
        answer = ship(ops, paid)
    # then
    assert answer.status == 201, answer.text
    shipment = answer.json
    assert (shipment["order_id"], shipment["user_id"], shipment["status"]) == (paid["order_id"], "U100", "Created")
    assert (shipment["carrier"], shipment["tracking_number"], shipment["version"]) == ("dhl", "JD0001", 1)
    assert answer.headers["Location"] == f"/orders/{paid['order_id']}/shipments/{shipment['shipment_id']}"
    assert answer.headers["ETag"] == '"1"'
    assert calls.operations == ["Query", "TransactWriteItems"]


def test_a_retried_creation_answers_the_first_shipment(ops: ApiClient, paid: dict[str, Any]) -> None:
    first = ship(ops, paid, key="ship-once")
    replay = ship(ops, paid, key="ship-once")
    assert (replay.status, replay.json) == (201, first.json)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert len([i for i in table_items() if i["entity_type"] == items.SHIPMENT]) == 1


def test_an_unpaid_order_is_not_shipped(commerce_api: ApiClient, ops: ApiClient) -> None:
    # given
    order = placed_order(commerce_api, line())
    # when
    answer = ship(ops, order)
    # then
    assert answer.status == 409
    assert (answer.json["type"], answer.json["order_status"]) == (NOT_SHIPPABLE, "Placed")
    assert [i for i in table_items() if i["entity_type"] == items.SHIPMENT] == []


def test_only_ops_create_shipments_and_only_of_orders_that_exist(
    commerce_api: ApiClient, ops: ApiClient, paid: dict[str, Any]
) -> None:
    assert ship(commerce_api, paid).status == 403
    assert ship(ops, {"order_id": "01J00000000000000000000000"}).status == 404
    no_key = ops.post(f"/orders/{paid['order_id']}/shipments", {"carrier": "dhl"})
    assert no_key.status == 400


@pytest.mark.parametrize("carrier", ["DHL", "d", "dhl#x", "dhl express"])
def test_a_carrier_is_a_lower_case_slug(ops: ApiClient, paid: dict[str, Any], carrier: str) -> None:
    assert ship(ops, paid, carrier=carrier).status == 422


def test_the_owner_and_ops_read_a_shipment_with_its_etag_and_others_do_not(
    commerce_api: ApiClient, ops: ApiClient, paid: dict[str, Any]
) -> None:
    # given
    shipment = shipped(ops, paid)
    path = f"/orders/{paid['order_id']}/shipments/{shipment['shipment_id']}"
    # when
    with dynamodb_calls() as calls:
        mine = commerce_api.get(path)
    # then
    assert (mine.status, mine.json, mine.headers["ETag"]) == (200, shipment, '"1"')
    assert calls.operations == ["GetItem"]
    assert ops.get(path).status == 200
    assert commerce_api.as_user("U-STRANGER").get(path).status == 404


# -- moving ----------------------------------------------------------------------------------------


def test_shipping_moves_the_shipment_and_the_order_together_with_both_events(
    commerce_api: ApiClient, ops: ApiClient, paid: dict[str, Any]
) -> None:
    # given
    shipment = shipped(ops, paid)
    # when
    with dynamodb_calls() as calls:
        answer = move(ops, shipment, "Shipped")
    # then the shipment moved, with its new ETag, and the order with it
    assert answer.status == 200, answer.text
    assert (answer.json["status"], answer.json["version"], answer.headers["ETag"]) == ("Shipped", 2, '"2"')
    assert calls.operations == ["BatchGetItem", "TransactWriteItems"]
    order = commerce_api.get(f"/orders/{paid['order_id']}")
    assert (order.json["status"], order.headers["ETag"]) == ("Shipped", '"3"')
    # and both events were written with the change
    (changed,) = outbox(events.ORDER_STATUS_CHANGED)
    assert {k: changed["detail"][k] for k in ("previous_status", "status", "shipment_id")} == {
        "previous_status": "Paid",
        "status": "Shipped",
        "shipment_id": shipment["shipment_id"],
    }
    (parcel,) = outbox(events.SHIPMENT_STATUS_CHANGED)
    assert {k: parcel["detail"][k] for k in ("previous_status", "status", "carrier", "tracking_number")} == {
        "previous_status": "Created",
        "status": "Shipped",
        "carrier": "dhl",
        "tracking_number": "JD0001",
    }
    # and the order left the Paid status index for the Shipped one
    stored = dynamo.deserialize(
        clients.dynamodb().get_item(TableName="CommerceTable", Key=dynamo.serialize(keys.order(paid["order_id"])))[
            "Item"
        ]
    )
    assert stored["by_status_pk"].startswith(keys.STATUS + "Shipped#")


def test_delivery_then_return_move_the_order_along(
    commerce_api: ApiClient, ops: ApiClient, paid: dict[str, Any]
) -> None:
    # given
    shipment = moved(ops, shipped(ops, paid), "Shipped")
    # when / then
    delivered = moved(ops, shipment, "Delivered")
    assert order_status(commerce_api, paid) == "Delivered"
    moved(ops, delivered, "Returned")
    assert order_status(commerce_api, paid) == "Returned"
    statuses = [(e["detail"]["previous_status"], e["detail"]["status"]) for e in outbox(events.ORDER_STATUS_CHANGED)]
    assert sorted(statuses) == sorted([("Paid", "Shipped"), ("Shipped", "Delivered"), ("Delivered", "Returned")])


def test_a_second_parcel_moves_alone_when_the_order_is_already_there(
    commerce_api: ApiClient, ops: ApiClient, paid: dict[str, Any]
) -> None:
    # given an order shipped with its first parcel, and a second parcel
    first, second = shipped(ops, paid), shipped(ops, paid)
    moved(ops, first, "Shipped")
    # when the second one ships
    answer = move(ops, second, "Shipped")
    # then it moves; the order stays Shipped, and only the parcel's event says so
    assert (answer.status, answer.json["status"]) == (200, "Shipped")
    assert order_status(commerce_api, paid) == "Shipped"
    assert len(outbox(events.ORDER_STATUS_CHANGED)) == 1
    assert len(outbox(events.SHIPMENT_STATUS_CHANGED)) == 2


def test_a_move_without_if_match_or_with_an_old_etag_changes_nothing(ops: ApiClient, paid: dict[str, Any]) -> None:
    # given
    shipment = moved(ops, shipped(ops, paid), "Shipped")
    path = f"/orders/{paid['order_id']}/shipments/{shipment['shipment_id']}"
    # when
    missing = ops.patch(path, {"status": "Delivered"})
    stale = move(ops, shipment, "Delivered", version=1)
    # then
    assert (missing.status, missing.json["type"]) == (428, "https://shopfeed.dev/problems/precondition-required")
    assert (stale.status, stale.json["current_version"]) == (412, 2)
    assert ops.get(path).json["status"] == "Shipped"


def test_a_move_the_state_machine_has_not_is_refused(ops: ApiClient, paid: dict[str, Any]) -> None:
    # given
    shipment = shipped(ops, paid)
    # when
    answer = move(ops, shipment, "Delivered")
    # then
    assert answer.status == 409
    assert answer.json["type"] == "https://shopfeed.dev/problems/invalid-transition"
    assert (answer.json["current_status"], answer.json["target_status"]) == ("Created", "Delivered")


def test_a_parcel_of_a_cancelled_order_is_not_shipped(
    commerce_api: ApiClient, ops: ApiClient, paid: dict[str, Any]
) -> None:
    # given a parcel created, then the paid order cancelled (and the parcel with it: version 2)
    shipment = shipped(ops, paid)
    assert commerce_api.post(f"/orders/{paid['order_id']}/cancel").json["status"] == "Cancelled"
    # when
    answer = move(ops, shipment, "Shipped", version=2)
    # then
    assert (answer.status, answer.json["type"], answer.json["order_status"]) == (409, NOT_SHIPPABLE, "Cancelled")


def test_only_ops_move_shipments(commerce_api: ApiClient, ops: ApiClient, paid: dict[str, Any]) -> None:
    shipment = shipped(ops, paid)
    assert move(commerce_api, shipment, "Shipped").status == 403


# -- ECOM-008: an order's shipments ------------------------------------------------------------------


def test_an_orders_shipments_are_listed_newest_update_first_five_a_page(
    commerce_api: ApiClient, ops: ApiClient, paid: dict[str, Any]
) -> None:
    # given seven parcels, the oldest one moved last
    made = [shipped(ops, paid) for _ in range(7)]
    moved(ops, made[0], "Shipped")
    newest_update_first = [made[0]["shipment_id"]] + [s["shipment_id"] for s in made[:0:-1]]
    path = f"/orders/{paid['order_id']}/shipments"
    # when
    with dynamodb_calls() as calls:
        first = commerce_api.get(path)
    # then
    assert first.status == 200, first.text
    assert [s["shipment_id"] for s in first.json["items"]] == newest_update_first[:5]
    assert first.json["items"][0]["status"] == "Shipped"
    assert calls.operations == ["Query"]
    walked = [s["shipment_id"] for page in pages(commerce_api, path) for s in page["items"]]
    assert walked == newest_update_first


def test_an_order_without_shipments_answers_an_empty_list_and_someone_elses_is_not_found(
    commerce_api: ApiClient, ops: ApiClient, paid: dict[str, Any]
) -> None:
    # given
    path = f"/orders/{paid['order_id']}/shipments"
    # when
    with dynamodb_calls() as calls:
        empty = commerce_api.get(path)
    # then
    assert (empty.status, empty.json) == (200, {"items": [], "next_cursor": None})
    assert calls.operations == ["Query", "Query"]
    shipped(ops, paid)
    assert commerce_api.as_user("U-STRANGER").get(path).status == 404
    assert len(ops.get(path).json["items"]) == 1


# -- ECOM-010: the dashboard ---------------------------------------------------------------------------


def test_the_dashboard_lists_one_status_carrier_and_month_newest_update_first(
    commerce_api: ApiClient, ops: ApiClient, payment_chain: PaymentChain
) -> None:
    # given parcels of two carriers, some shipped
    order = paid_order(commerce_api, payment_chain)
    dhl = [shipped(ops, order, "dhl") for _ in range(4)]
    ups = shipped(ops, order, "ups")
    for shipment in (dhl[2], dhl[0], dhl[3]):
        moved(ops, shipment, "Shipped")
    moved(ops, ups, "Shipped")
    month = dhl[0]["created_at"][:7]
    # when
    with dynamodb_calls() as calls:
        page = ops.get("/shipments", query={"status": "Shipped", "carrier": "dhl", "month": month, "limit": 2})
    # then: the shipped dhl parcels only, the last shipped first, one Query a page
    assert page.status == 200, page.text
    expected = [dhl[3]["shipment_id"], dhl[0]["shipment_id"], dhl[2]["shipment_id"]]
    assert [s["shipment_id"] for s in page.json["items"]] == expected[:2]
    assert calls.operations == ["Query"]
    walked = [
        s["shipment_id"]
        for p in pages(ops, "/shipments", status="Shipped", carrier="dhl", month=month, limit=2)
        for s in p["items"]
    ]
    assert walked == expected
    created = ops.get("/shipments", query={"status": "Created", "carrier": "dhl", "month": month}).json["items"]
    assert [s["shipment_id"] for s in created] == [dhl[1]["shipment_id"]]


def test_only_ops_see_the_dashboard(commerce_api: ApiClient) -> None:
    assert commerce_api.get("/shipments", query={"status": "Shipped", "carrier": "dhl"}).status == 403
