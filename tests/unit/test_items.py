"""Stored items ↔ domain models: every mapping round-trips, also through DynamoDB's wire format."""

import pytest

from local.harness.builders import customer, euros, line_of, order, product
from shopfeed.commerce import events, items, keys
from shopfeed.commerce.models import OrderStatus
from shopfeed.platform import dynamo
from shopfeed.platform.outbox import OutboxEvent

SHIRT = product("P-RED-TSHIRT", price=euros(1999))
MUG = product("P-MUG", price=euros(899))
ORDER = order([line_of(SHIRT, 2), line_of(MUG, 1)], user_id="U100")


def stored(item: dynamo.Item) -> dynamo.Item:
    """``item`` as a GetItem or Query would hand it back (numbers come back as Decimal, then int)."""
    return dynamo.deserialize(dynamo.serialize(item))


def test_a_customer_round_trips_and_its_email_guard_points_at_it() -> None:
    # given
    ada = customer("U100", email="ada@example.com")
    # when
    item, guard = stored(items.customer_item(ada)), stored(items.email_guard_item(ada))
    # then
    assert items.customer_from(item) == ada
    assert item["entity_type"] == items.CUSTOMER
    assert (guard["entity_type"], guard["user_id"]) == (items.EMAIL_GUARD, "U100")
    assert {k: guard[k] for k in ("PK", "SK")} == keys.email_guard("ada@example.com")


def test_a_product_round_trips_and_is_listed_in_its_category() -> None:
    # when
    item = stored(items.product_item(SHIRT))
    # then (its stock is in its buckets: the item holds none, the total is given)
    assert "available" not in item
    assert items.product_from(item, available=SHIRT.available) == SHIRT
    assert item["entity_type"] == items.PRODUCT
    assert item["by_category_pk"] == keys.category_partition(SHIRT.category)
    assert items.product_summary_from(item).model_dump() == SHIRT.model_dump(
        include={"product_id", "name", "category", "price"}
    )


def test_an_order_round_trips_from_its_header_and_line_items() -> None:
    # when
    header = stored(items.order_item(ORDER))
    lines = [stored(items.order_line_item(ORDER, line)) for line in ORDER.lines]
    # then
    assert items.order_from(header, lines) == ORDER
    assert items.order_from(header) == ORDER.model_copy(update={"lines": ()})
    assert header["entity_type"] == items.ORDER
    assert "lines" not in header
    assert {line["entity_type"] for line in lines} == {items.ORDER_LINE}


def test_an_order_line_carries_its_owner_so_a_lines_query_can_filter_on_it() -> None:
    item = items.order_line_item(ORDER, ORDER.lines[0])
    assert (item["user_id"], item["order_id"]) == (ORDER.user_id, ORDER.order_id)


def test_an_order_header_feeds_both_order_indexes_and_their_summary() -> None:
    # when
    header = stored(items.order_item(ORDER))
    # then
    assert {k: header[k] for k in ("by_user_pk", "by_user_sk")} == keys.order_by_user(
        ORDER.user_id, ORDER.placed_at, ORDER.order_id
    )
    assert {k: header[k] for k in ("by_status_pk", "by_status_sk")} == keys.order_by_status(
        OrderStatus.PLACED, ORDER.placed_at, ORDER.order_id
    )
    summary = items.order_summary_from({k: header[k] for k in keys.ORDER_SUMMARY_ATTRIBUTES})
    assert summary.model_dump() == ORDER.model_dump(include=set(keys.ORDER_SUMMARY_ATTRIBUTES))


@pytest.mark.parametrize(
    "event", [events.order_placed(ORDER), events.order_cancelled(ORDER, "U-OPS")], ids=lambda e: e.event_type
)
def test_an_outbox_event_round_trips_and_waits_in_the_unpublished_index(event: OutboxEvent) -> None:
    # when
    item = stored(items.outbox_item(event))
    # then
    assert items.outbox_event_from(item) == event
    assert item["entity_type"] == items.OUTBOX_EVENT
    assert {k: item[k] for k in ("PK", "SK")} == keys.outbox(item["event_id"])
    assert "unpublished_pk" in item
