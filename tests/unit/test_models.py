"""Domain rules that live on the models: the order and shipment state machines, line totals, the order size bound."""

import itertools

import pytest
from pydantic import ValidationError

from local.harness.builders import euros
from shopfeed.commerce.models import MAX_ORDER_LINES, OrderLine, OrderStatus, ShipmentStatus
from shopfeed.commerce.schemas import PlaceOrder

Placed, Paid, Shipped, Delivered, Returned, Cancelled, Expired = (
    OrderStatus.PLACED,
    OrderStatus.PAID,
    OrderStatus.SHIPPED,
    OrderStatus.DELIVERED,
    OrderStatus.RETURNED,
    OrderStatus.CANCELLED,
    OrderStatus.EXPIRED,
)
ALLOWED = {
    (Placed, Paid),
    (Placed, Cancelled),
    (Placed, Expired),
    (Paid, Shipped),
    (Paid, Cancelled),
    (Shipped, Delivered),
    (Shipped, Returned),
    (Delivered, Returned),
    # the payment worker, when the provider refunded the payment
    (Cancelled, OrderStatus.REFUNDED),
    (Returned, OrderStatus.REFUNDED),
}

# TransactWriteItems' hard limit, and what placing an order of n lines puts in it:
# the header, n lines, n guarded stock decrements, the outbox event, the history item and the
# idempotency record.
TRANSACTION_LIMIT = 100


def items_written_by_an_order_of(lines: int) -> int:
    return 1 + lines + lines + 1 + 1 + 1


@pytest.mark.parametrize(("current", "target"), list(itertools.product(OrderStatus, repeat=2)))
def test_an_order_moves_only_along_the_state_machine(current: OrderStatus, target: OrderStatus) -> None:
    assert current.can_become(target) is ((current, target) in ALLOWED)


def test_returned_and_cancelled_orders_can_only_be_refunded_refunded_and_expired_ones_are_final() -> None:
    assert [s for s in OrderStatus if Returned.can_become(s) or Cancelled.can_become(s)] == [OrderStatus.REFUNDED]
    assert [s for s in OrderStatus if any(final.can_become(s) for final in (OrderStatus.REFUNDED, Expired))] == []


SHIPMENT_ALLOWED = {
    (ShipmentStatus.CREATED, ShipmentStatus.SHIPPED),
    (ShipmentStatus.SHIPPED, ShipmentStatus.DELIVERED),
    (ShipmentStatus.SHIPPED, ShipmentStatus.RETURNED),
    (ShipmentStatus.DELIVERED, ShipmentStatus.RETURNED),
}


@pytest.mark.parametrize(("current", "target"), list(itertools.product(ShipmentStatus, repeat=2)))
def test_a_shipment_moves_only_along_its_state_machine(current: ShipmentStatus, target: ShipmentStatus) -> None:
    assert current.can_become(target) is ((current, target) in SHIPMENT_ALLOWED)


def test_a_shipment_reaching_a_status_names_the_order_status_it_moves_its_order_to() -> None:
    assert {s: s.order_status for s in ShipmentStatus} == {
        ShipmentStatus.CREATED: None,
        ShipmentStatus.SHIPPED: Shipped,
        ShipmentStatus.DELIVERED: Delivered,
        ShipmentStatus.RETURNED: Returned,
        ShipmentStatus.CANCELLED: None,  # only with its order, which moves itself
    }
    # and each of those moves is one the order's own state machine has, from some status
    moved = [s.order_status for s in ShipmentStatus if s.order_status is not None]
    assert all(any(before.can_become(after) for before in OrderStatus) for after in moved)


def test_a_line_total_is_the_unit_price_times_the_quantity_in_the_same_currency() -> None:
    # given
    line = OrderLine(line_no=1, product_id="P-RED-TSHIRT", quantity=3, unit_price=euros(1999))
    # then
    assert line.line_total == euros(5997)


def test_the_largest_order_still_fits_one_transaction() -> None:
    assert items_written_by_an_order_of(MAX_ORDER_LINES) <= TRANSACTION_LIMIT
    assert items_written_by_an_order_of(MAX_ORDER_LINES + 1) > TRANSACTION_LIMIT


def test_an_order_line_beyond_the_bound_cannot_exist() -> None:
    with pytest.raises(ValidationError):
        OrderLine(line_no=MAX_ORDER_LINES + 1, product_id="P-RED-TSHIRT", quantity=1, unit_price=euros(1))


def test_an_order_request_longer_than_the_bound_is_refused_before_any_write() -> None:
    # given
    line = {"product_id": "P-RED-TSHIRT", "quantity": 1, "unit_price": {"amount": 1, "currency": "EUR"}}
    # when
    with pytest.raises(ValidationError) as refused:
        PlaceOrder.model_validate({"lines": [line] * (MAX_ORDER_LINES + 1)})
    # then
    assert [e["loc"] for e in refused.value.errors()] == [("lines",)]
    assert len(PlaceOrder.model_validate({"lines": [line] * MAX_ORDER_LINES}).lines) == MAX_ORDER_LINES
