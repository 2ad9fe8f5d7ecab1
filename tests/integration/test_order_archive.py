"""The order archive (ECOM-011) on moto: S3 and CommerceTable from template.yaml, the function's handler
invoked as the schedule invokes it. The thousand-order runs are on DynamoDB Local
(tests/ddblocal/test_order_archive.py): moto answers a Query by reading the whole table."""

import math
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from functions.order_archiver.app import lambda_handler as order_archiver
from local.harness.apigw import sample
from local.harness.client import ApiClient
from shopfeed.commerce import items, keys
from shopfeed.commerce.archive import archiver as archive
from shopfeed.commerce.models import Order, OrderStatus
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import iso, utc_now
from tests.support.archive import (
    CRASH_POINTS,
    Bucket,
    Crash,
    CrashPoint,
    ScheduledContext,
    archive_partition_items,
    crash_at,
    create_archive_bucket,
    days_ago,
    hot_order_items,
    old_orders,
    order_items,
    seed,
)
from tests.support.calls import dynamodb_calls, s3_calls

TABLE = "CommerceTable"
BUCKET = "archivebucket"


@pytest.fixture
def bucket(aws: None, monkeypatch: pytest.MonkeyPatch) -> Bucket:
    monkeypatch.setenv("ARCHIVE_BUCKET_NAME", BUCKET)
    create_archive_bucket(clients.s3(), BUCKET)
    return Bucket(clients.s3(), BUCKET)


def run(context: ScheduledContext | None = None) -> dict[str, Any]:
    """One scheduled run of the archiver function."""
    return dict(order_archiver(sample("schedules/order_archive.json"), context or ScheduledContext()))


def placed_over(days: int, count: int) -> list[Order]:
    """``count`` orders placed evenly over ``days`` days, the youngest 100 days ago (the cutoff is 90)."""
    step = timedelta(days=days) / count
    return old_orders(count, days_ago(100) - step * (count - 1), step)


def hot_orders() -> set[str]:
    return {keys.parse_order_id(item["PK"]) for item in hot_order_items(clients.dynamodb(), TABLE)}


def as_stored(orders: list[Order]) -> list[dynamo.Item]:
    """The orders' items as a read hands them back, in key order."""
    stored = [dynamo.deserialize(dynamo.serialize(item)) for order in orders for item in order_items(order)]
    return sorted(stored, key=_key)


def _key(item: dict[str, Any]) -> tuple[str, str]:
    return item["PK"], item["SK"]


def _lines_of_orders(bucket: Bucket, key: str) -> list[dict[str, Any]]:
    return [line for line in bucket.lines(key) if line["entity_type"] != items.ORDER]


def _exactly_once(bucket: Bucket, orders: list[Order]) -> None:
    assert bucket.header_counts() == Counter({order.order_id: 1 for order in orders})
    assert sorted(bucket.items(), key=_key) == as_stored(orders)


# -- a run ------------------------------------------------------------------------------------------


def test_a_run_moves_every_old_order_to_s3_by_month_and_leaves_none_hot(bucket: Bucket) -> None:
    # given 250 old orders over three months and 10 young ones
    old = placed_over(75, 250)
    young = old_orders(10, days_ago(30), timedelta(hours=1))
    seed(clients.dynamodb(), TABLE, old + young)
    months = Counter(order.placed_at[:7] for order in old)
    assert len(months) >= 3

    # when
    with dynamodb_calls() as calls, s3_calls() as s3:
        report = run()

    # then every old order is in S3 exactly once, item for item; the young ones are all that is hot
    _exactly_once(bucket, old)
    assert hot_orders() == {order.order_id for order in young}
    assert archive_partition_items(clients.dynamodb(), TABLE) == []

    # and each object is one month's batch of at most 100 orders, under that month's partition
    batches = sum(math.ceil(count / archive.BATCH_SIZE) for count in months.values())
    assert len(bucket.object_keys()) == batches
    for key in bucket.object_keys():
        lines = bucket.lines(key)
        month = key.removeprefix("orders/month=").split("/")[0]
        assert {line["placed_at"][:7] for line in lines if line["entity_type"] == items.ORDER} == {month}
        assert len({line["order_id"] for line in lines}) <= archive.BATCH_SIZE
    assert report == {
        "outcome": "done",
        "batches": batches,
        "resumed": 0,
        "orders": 250,
        "items": 500,
        "kept": 0,
        "paying": 0,
        "unpaid": 0,
    }

    # and the round trips are two per order (its Query, its header's delete), a few per batch and run
    index_pages = sum(count // 100 + 1 for count in Counter(keys.order_age_shard(o.order_id) for o in old).values())
    line_deletes = sum(math.ceil(len(_lines_of_orders(bucket, key)) / 25) for key in bucket.object_keys())
    assert calls.counts() == {
        "Query": 1 + index_pages + len(old),  # the manifests, the age index pages, each order's partition
        "PutItem": 1 + batches,  # the lease, each manifest
        "UpdateItem": batches,  # each manifest marked written
        "DeleteItem": len(old) + batches + 1,  # each order's header, each manifest, the lease
        "BatchWriteItem": line_deletes,  # the lines, 25 a call
    }
    assert s3.counts() == {"PutObject": batches}


def test_everything_in_an_orders_partition_goes_with_it(bucket: Bucket) -> None:
    # given an old order whose partition also holds an item of another kind (as payments and shipments
    # keep theirs there)
    (order,) = placed_over(1, 1)
    other = {"PK": keys.order_partition(order.order_id), "SK": "Z-OTHER-ITEM", "entity_type": "Other", "n": 7}
    seed(clients.dynamodb(), TABLE, [order], extra=[other])

    # when
    run()

    # then that item is archived with the order and gone from the table
    assert sorted(bucket.items(), key=_key) == sorted([*as_stored([order]), other], key=_key)
    assert hot_order_items(clients.dynamodb(), TABLE) == []


def test_an_archived_order_answers_404_and_leaves_my_orders_while_a_young_one_stays(
    bucket: Bucket, commerce_api: ApiClient, shop: None
) -> None:
    # given an old order of U100 and one placed now through the API
    (old,) = old_orders(1, days_ago(120), timedelta(0), user_id="U100")
    seed(clients.dynamodb(), TABLE, [old])
    young = commerce_api.post(
        "/orders",
        {"lines": [{"product_id": "P-RED-TSHIRT", "quantity": 1, "unit_price": {"amount": 1999, "currency": "EUR"}}]},
        headers={"Idempotency-Key": "young"},
    ).json
    assert commerce_api.get(f"/orders/{old.order_id}").status == 200

    # when
    run()

    # then
    assert commerce_api.get(f"/orders/{old.order_id}").status == 404
    assert commerce_api.get(f"/orders/{young['order_id']}").status == 200
    listed = [o["order_id"] for o in commerce_api.get("/users/me/orders").json["items"]]
    assert listed == [young["order_id"]]


# -- dying mid-run ----------------------------------------------------------------------------------


@pytest.mark.parametrize("point", CRASH_POINTS, ids=str)
def test_a_run_that_dies_at_any_step_is_finished_by_the_next_and_each_order_is_archived_once(
    bucket: Bucket, point: CrashPoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given 40 old orders over two months, archived in batches of 10 (the step each point names is
    # taken by every batch, whatever its size), and a run that dies in the second batch
    monkeypatch.setenv("ARCHIVE_BATCH_ORDERS", "10")
    old = placed_over(40, 40)
    seed(clients.dynamodb(), TABLE, old)
    first = min(10, Counter(order.placed_at[:7] for order in old)[old[0].placed_at[:7]])
    client = clients.s3() if point.service == "s3" else clients.dynamodb()
    with crash_at(client, point.event, point.nth(first), point.when), pytest.raises(Crash):
        run()

    # when the schedule runs it again
    report = run()

    # then every order is in S3 exactly once and none is hot, and the job left nothing behind
    _exactly_once(bucket, old)
    assert hot_orders() == set()
    assert archive_partition_items(clients.dynamodb(), TABLE) == []
    assert report["resumed"] == 1
    # an object written again (its batch was only recorded) holds the same bytes
    for key in bucket.object_keys():
        assert len({version["ETag"] for version in bucket.versions(key)}) == 1, key


# -- an order that changes while it is archived -----------------------------------------------------


def _change(order_id: str) -> None:
    """A late change to an order (as a cancel makes): its version moves."""
    clients.dynamodb().update_item(
        TableName=TABLE,
        Key=dynamo.serialize(keys.order(order_id)),
        UpdateExpression="SET #status = :cancelled, #version = #version + :one, updated_at = :now",
        ExpressionAttributeNames={"#status": "status", "#version": "version"},
        ExpressionAttributeValues=dynamo.serialize({":cancelled": "Cancelled", ":one": 1, ":now": iso(utc_now())}),
    )


def test_an_order_changed_after_its_object_was_written_stays_hot_and_leaves_the_object(bucket: Bucket) -> None:
    # given 30 old orders, one of which is cancelled right after the batch's object was written
    old = placed_over(1, 30)
    seed(clients.dynamodb(), TABLE, old)
    late = old[7].order_id

    def cancel_late(**_: Any) -> None:
        clients.s3().meta.events.unregister("after-call.s3.PutObject", cancel_late)
        _change(late)

    clients.s3().meta.events.register("after-call.s3.PutObject", cancel_late)

    # when
    report = run()

    # then the changed order is hot, as changed, and the object holds the other 29, once each
    assert report["kept"] == 1
    assert hot_orders() == {late}
    (key,) = bucket.object_keys()
    assert bucket.header_counts() == Counter({o.order_id: 1 for o in old if o.order_id != late})
    assert len(bucket.versions(key)) == 2  # the first write, kept by versioning

    # and the next run archives it, as it is now, in an object of its own
    run()
    assert hot_orders() == set()
    assert bucket.header_counts() == Counter({o.order_id: 1 for o in old})
    (archived,) = [i for i in bucket.items() if i["entity_type"] == items.ORDER and i["order_id"] == late]
    assert (archived["status"], archived["version"]) == ("Cancelled", 2)


def _start_payment(order_id: str, flag: str = items.PAYMENT_PENDING) -> None:
    """What starting a payment (or a refund: ``items.REFUND_PENDING``) does to an order's header as the
    archive sees it: the flag."""
    clients.dynamodb().update_item(
        TableName=TABLE,
        Key=dynamo.serialize(keys.order(order_id)),
        UpdateExpression="SET #pending = :attempt",
        ExpressionAttributeNames={"#pending": flag},
        ExpressionAttributeValues=dynamo.serialize({":attempt": "01M8A15NZ6942M3VB6QCVS3Z0R"}),
    )


@pytest.mark.parametrize("flag", [items.PAYMENT_PENDING, items.REFUND_PENDING])
def test_an_old_order_with_a_payment_or_refund_in_flight_stays_hot_until_it_settles(bucket: Bucket, flag: str) -> None:
    # given 10 old orders, one of them with a payment (or a refund) the worker has not settled yet
    old = placed_over(1, 10)
    seed(clients.dynamodb(), TABLE, old)
    paying = old[4].order_id
    _start_payment(paying, flag)

    # when
    report = run()

    # then it is left hot, out of every object; the others are archived
    assert report["paying"] == 1
    assert hot_orders() == {paying}
    assert paying not in bucket.header_counts()

    # and once its payment settled (the flag gone), the next run takes it
    clients.dynamodb().update_item(
        TableName=TABLE,
        Key=dynamo.serialize(keys.order(paying)),
        UpdateExpression="REMOVE #pending",
        ExpressionAttributeNames={"#pending": flag},
    )
    run()
    assert hot_orders() == set()
    assert bucket.header_counts() == Counter({o.order_id: 1 for o in old})


def test_an_old_unpaid_order_holding_stock_is_never_archived_until_it_leaves_placed(bucket: Bucket) -> None:
    # given 10 old orders, two of them never paid (still Placed: their stock is held)
    done = placed_over(1, 8)
    unpaid = old_orders(2, days_ago(120), timedelta(hours=1), status=OrderStatus.PLACED)
    seed(clients.dynamodb(), TABLE, done + unpaid)

    # when
    report = run()

    # then the unpaid ones stay hot, in no object; the others are archived
    assert (report["orders"], report["unpaid"]) == (8, 2)
    assert hot_orders() == {o.order_id for o in unpaid}
    assert bucket.header_counts() == Counter({o.order_id: 1 for o in done})

    # and once one leaves Placed (the payment window expires it), the next run takes it
    _change(unpaid[0].order_id)
    assert run()["orders"] == 1
    assert hot_orders() == {unpaid[1].order_id}


@pytest.mark.parametrize("flag", [items.PAYMENT_PENDING, items.REFUND_PENDING])
def test_a_payment_or_refund_started_while_its_order_is_archived_keeps_the_order_hot(bucket: Bucket, flag: str) -> None:
    # given 30 old orders, one of which gets a payment (or a refund) right after the batch's object was written
    old = placed_over(1, 30)
    seed(clients.dynamodb(), TABLE, old)
    late = old[11].order_id

    def pay_late(**_: Any) -> None:
        clients.s3().meta.events.unregister("after-call.s3.PutObject", pay_late)
        _start_payment(late, flag)

    clients.s3().meta.events.register("after-call.s3.PutObject", pay_late)

    # when
    report = run()

    # then the order keeps its header (and its payment's flag), and no object holds it
    assert report["kept"] == 1
    assert hot_orders() == {late}
    assert bucket.header_counts() == Counter({o.order_id: 1 for o in old if o.order_id != late})


def test_a_run_that_dies_rewriting_an_object_is_finished_from_the_object(bucket: Bucket) -> None:
    # given a batch whose order changed, and a run that dies after naming the orders kept but before
    # writing the object again
    old = placed_over(1, 30)
    seed(clients.dynamodb(), TABLE, old)
    late = old[3].order_id

    def cancel_late(**_: Any) -> None:
        clients.s3().meta.events.unregister("after-call.s3.PutObject", cancel_late)
        _change(late)

    clients.s3().meta.events.register("after-call.s3.PutObject", cancel_late)
    with crash_at(clients.s3(), "before-call.s3.PutObject", nth=2), pytest.raises(Crash):
        run()
    (key,) = bucket.object_keys()
    assert late in bucket.header_counts()  # the object still has it

    # when the next run finishes the batch
    report = run()

    # then the batch's object no longer holds the changed order, which the same run archived on its own
    assert report["resumed"] == 1
    assert hot_orders() == set()
    assert bucket.header_counts() == Counter({o.order_id: 1 for o in old})
    assert late not in {line["order_id"] for line in bucket.lines(key)}
    assert len(bucket.object_keys()) == 2


# -- bounds and overlap -----------------------------------------------------------------------------


def test_a_run_takes_at_most_its_bound_oldest_first_and_the_next_run_goes_on(
    bucket: Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given 150 old orders and a bound of 120 a run
    old = placed_over(40, 150)
    seed(clients.dynamodb(), TABLE, old)
    monkeypatch.setenv("ARCHIVE_MAX_ORDERS_PER_RUN", "120")

    # when
    first = run()

    # then the 120 oldest left, and the run says there may be more
    assert (first["outcome"], first["orders"]) == ("limit", 120)
    assert hot_orders() == {order.order_id for order in old[120:]}

    # and the next run takes the rest
    second = run()
    assert (second["outcome"], second["orders"]) == ("done", 30)
    _exactly_once(bucket, old)


def test_a_run_begins_no_batch_once_its_time_is_short_and_the_next_run_goes_on(bucket: Bucket) -> None:
    # given old orders of three months, and an invocation whose time runs short after its first batch
    old = placed_over(75, 90)
    seed(clients.dynamodb(), TABLE, old)
    asked = Counter[str]()

    def remaining_ms() -> int:
        asked["times"] += 1
        return 900_000 if asked["times"] <= 2 else 59_000  # the lease, the first batch; then below a minute

    # when
    first = run(ScheduledContext(remaining_ms=remaining_ms))

    # then one batch was done, cleanly: no manifest or lease is left
    assert (first["outcome"], first["batches"]) == ("time", 1)
    assert archive_partition_items(clients.dynamodb(), TABLE) == []

    # and the next run goes on
    assert run()["outcome"] == "done"
    _exactly_once(bucket, old)


def test_a_run_finds_another_holding_the_job_and_leaves_everything_alone(bucket: Bucket) -> None:
    # given old orders, and another run holding the job's lease for another five minutes
    old = placed_over(1, 5)
    seed(clients.dynamodb(), TABLE, old)
    lease = items.archive_lease_item("01OTHERRUN0000000000000000", iso(utc_now() + timedelta(minutes=5)))
    clients.dynamodb().put_item(TableName=TABLE, Item=dynamo.serialize(lease))

    # when
    report = run()

    # then nothing moved
    assert report["outcome"] == "busy"
    assert bucket.object_keys() == []
    assert len(hot_orders()) == 5

    # and once that lease has run out, a run takes the job
    expired = lease | {"held_until": iso(utc_now() - timedelta(seconds=1))}
    clients.dynamodb().put_item(TableName=TABLE, Item=dynamo.serialize(expired))
    assert run()["outcome"] == "done"
    _exactly_once(bucket, old)
