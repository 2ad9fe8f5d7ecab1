"""CommerceTable key formats: the data model's persisted contract, built and parsed in one module."""

from collections.abc import Callable

import pytest

from shopfeed.commerce import keys
from shopfeed.commerce.models import MAX_ORDER_LINES, OrderStatus
from shopfeed.platform.clock import new_id

ORDER_ID = "01JQ8Z6V4C0000000000000000"


def test_base_table_keys_are_a_prefix_plus_the_id_and_a_fixed_sort_key() -> None:
    assert keys.user("U100") == {"PK": keys.USER + "U100", "SK": keys.PROFILE}
    assert keys.product("P-RED-TSHIRT") == {"PK": keys.PRODUCT + "P-RED-TSHIRT", "SK": keys.META}
    assert keys.order(ORDER_ID) == {"PK": keys.ORDER + ORDER_ID, "SK": keys.META}
    assert keys.outbox("E1") == {"PK": keys.OUTBOX + "E1", "SK": keys.EVENT}


def test_the_email_guard_is_case_insensitive() -> None:
    assert keys.email_guard("Ada@Example.COM") == keys.email_guard("ada@example.com")
    assert keys.email_guard("ada@example.com")["SK"] == keys.GUARD


def test_order_lines_share_the_order_partition_and_sort_before_its_header() -> None:
    # given
    lines = [keys.order_line(ORDER_ID, n) for n in range(1, MAX_ORDER_LINES + 1)]
    # then: one Query "SK BETWEEN LINE# AND META" reads lines and header, lines by number
    assert {line["PK"] for line in lines} == {keys.order(ORDER_ID)["PK"], keys.order_partition(ORDER_ID)}
    assert sorted(line["SK"] for line in lines) == [line["SK"] for line in lines]
    assert all(keys.LINE <= line["SK"] < keys.META for line in lines)


def test_a_users_orders_sort_by_placement_time_then_id() -> None:
    # given
    earlier = keys.order_by_user("U100", "2026-03-05T09:59:59.999Z", "01JZZZZZZZZZZZZZZZZZZZZZZZ")
    later = keys.order_by_user("U100", "2026-03-05T10:00:00.000Z", "01J00000000000000000000000")
    # then
    assert earlier["by_user_pk"] == later["by_user_pk"] == keys.user_orders_partition("U100")
    assert earlier["by_user_sk"] < later["by_user_sk"]


def test_an_orders_status_key_names_the_status_the_placement_month_and_the_orders_shard() -> None:
    # when
    key = keys.order_by_status(OrderStatus.PLACED, "2026-03-05T10:00:00.000Z", ORDER_ID)
    # then
    shard = keys.order_status_shard(ORDER_ID)
    assert key["by_status_pk"] == keys.status_partition(OrderStatus.PLACED, "2026-03", shard)
    assert key["by_status_sk"] == keys.order_by_user("U1", "2026-03-05T10:00:00.000Z", ORDER_ID)["by_user_sk"]


def test_another_status_or_month_is_another_partition() -> None:
    partitions = {
        keys.status_partition(status, month, 0)
        for status in (OrderStatus.PLACED, OrderStatus.CANCELLED)
        for month in ("2026-03", "2026-04")
    }
    assert len(partitions) == 4


@pytest.mark.parametrize(
    ("order_id", "shard", "under_four"),
    [
        # Pinned: changing the hash strands every order already written under the old shard. The count
        # grew from 4 to 16 (decision 228): the same hash, so a shard mod 4 is the one it had under 4.
        ("01JQ8Z6V4Q0000000000000000", 8, 0),
        ("01JQ8Z6V4C0000000000000000", 1, 1),
        ("01JQ8Z6V4DXYZXYZXYZXYZXYZX", 10, 2),
        ("01ARZ3NDEKTSV4RRFFQ69G5FAV", 3, 3),
    ],
)
def test_the_status_shard_of_an_order_is_the_same_in_every_process(order_id: str, shard: int, under_four: int) -> None:
    assert keys.order_status_shard(order_id) == shard
    assert shard % 4 == under_four


def test_status_shards_stay_in_range_and_all_get_used() -> None:
    # when
    shards = {keys.order_status_shard(new_id()) for _ in range(400)}
    # then
    assert shards == set(range(keys.ORDER_STATUS_SHARDS))


def test_unpublished_outbox_events_spread_over_every_outbox_shard() -> None:
    # when
    entries = [keys.outbox_unpublished(new_id(), "2026-03-05T10:00:00.000Z") for _ in range(400)]
    # then
    assert {e["unpublished_pk"] for e in entries} == {keys.unpublished_partition(n) for n in range(keys.OUTBOX_SHARDS)}


def test_unpublished_outbox_events_sort_oldest_first_within_a_shard() -> None:
    # given
    event_id = new_id()
    # when
    older = keys.outbox_unpublished(event_id, "2026-03-05T09:59:59.999Z")
    newer = keys.outbox_unpublished(event_id, "2026-03-05T10:00:00.000Z")
    # then
    assert older["unpublished_pk"] == newer["unpublished_pk"]
    assert older["unpublished_sk"] < newer["unpublished_sk"]


def test_parsers_invert_the_builders() -> None:
    assert keys.parse_order_id(keys.order(ORDER_ID)["PK"]) == ORDER_ID
    assert keys.parse_line_no(keys.order_line(ORDER_ID, 7)["SK"]) == 7
    assert keys.parse_event_id(keys.outbox("E1")["PK"]) == "E1"


@pytest.mark.parametrize(
    ("parse", "foreign"),
    [
        pytest.param(keys.parse_order_id, keys.user("U100")["PK"], id="order-id-of-a-user-key"),
        pytest.param(keys.parse_order_id, keys.outbox("E1")["PK"], id="order-id-of-an-outbox-key"),
        pytest.param(keys.parse_event_id, keys.order(ORDER_ID)["PK"], id="event-id-of-an-order-key"),
        pytest.param(keys.parse_line_no, keys.META, id="line-no-of-a-header"),
        pytest.param(keys.parse_line_no, keys.PROFILE, id="line-no-of-a-profile"),
    ],
)
def test_parsers_reject_keys_of_another_entity(parse: Callable[[str], object], foreign: str) -> None:
    with pytest.raises(ValueError, match="not an"):
        parse(foreign)


@pytest.mark.parametrize(
    ("one", "other"),
    [("a#b", "a%23b"), ("a%b", "a%25b"), ("#", "%23"), ("a", "a#"), ("x%2", "x%25"), ("U100", "U100 ")],
)
def test_user_keys_of_different_subjects_never_collide(one: str, other: str) -> None:
    assert keys.user(one) != keys.user(other)
    assert keys.user_orders_partition(one) != keys.user_orders_partition(other)


def test_an_escaped_subject_holds_no_separator() -> None:
    assert "#" not in keys.user_orders_partition("a#b#PROFILE").removeprefix(keys.USER)


# -- payments and shipments -------------------------------------------------------------------------


def test_attempts_and_shipments_share_the_order_partition_after_its_header_and_lines() -> None:
    # given
    attempt = keys.payment_attempt(ORDER_ID, new_id())
    shipment = keys.shipment(ORDER_ID, new_id())
    # then: the order Query (LINE# .. META) never reads them, and each kind is one begins_with away
    assert attempt["PK"] == shipment["PK"] == keys.order_partition(ORDER_ID)
    assert keys.order_line(ORDER_ID, 1)["SK"] < keys.META < attempt["SK"] < shipment["SK"]
    assert attempt["SK"].startswith(keys.PAYMENT)
    assert shipment["SK"].startswith(keys.SHIPMENT)


def test_an_orders_attempts_sort_by_time_so_newest_first_is_a_descending_query() -> None:
    # given attempt ids made one after another (ULIDs)
    made = [keys.payment_attempt(ORDER_ID, new_id())["SK"] for _ in range(5)]
    # then
    assert made == sorted(made)


def test_pending_attempts_spread_over_the_write_shards_oldest_first_within_each() -> None:
    # given
    attempt_ids = [new_id() for _ in range(200)]
    # when
    pending = [keys.pending_payment(a, "2026-03-05T10:00:00.000Z") for a in attempt_ids]
    # then every shard is used, and each key sorts by creation time, then id
    assert {p["pending_pk"] for p in pending} == {keys.pending_partition(n) for n in range(keys.PENDING_PAYMENT_SHARDS)}
    earlier = keys.pending_payment(attempt_ids[0], "2026-03-05T09:59:59.999Z")
    assert earlier["pending_sk"] < pending[0]["pending_sk"]


def test_a_shipments_dashboard_key_names_its_status_carrier_and_the_month_of_its_update() -> None:
    # when
    key = keys.shipment_by_status("Shipped", "dhl", "2026-03-31T23:59:59.999Z", "S1")
    # then
    assert key == {
        keys.SHIPMENTS_BY_STATUS.partition_key: keys.shipments_partition("Shipped", "dhl", "2026-03"),
        keys.SHIPMENTS_BY_STATUS.sort_key: "2026-03-31T23:59:59.999Z#S1",
    }
    by_order = keys.shipment_by_order(ORDER_ID, "2026-03-31T23:59:59.999Z", "S1")
    assert by_order[keys.SHIPMENTS_BY_ORDER.partition_key] == keys.order_partition(ORDER_ID)


def test_the_sandbox_ledger_has_one_item_per_idempotency_key() -> None:
    assert keys.sandbox_charge("A1") == {"PK": keys.SANDBOX + "A1", "SK": keys.CHARGE}
    assert keys.sandbox_charge("A1") != keys.sandbox_charge("A2")
