"""The order archive at scale on real engines: 1,000 old orders, DynamoDB Local and a moto server's S3
(started as the local stack starts them). A run that dies at any step, or is SIGKILLed mid-run, is
finished by the next, and every order ends up in S3 exactly once."""

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from functions.order_archiver.app import lambda_handler as order_archiver
from local import cfn, engines
from local.dynamodb_local import DynamoDBLocal
from local.harness.apigw import sample
from shopfeed.commerce import bootstrap, keys
from shopfeed.commerce.archive import archiver as archive
from shopfeed.commerce.models import Order
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import utc_now
from tests.conftest import reset_caches
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
    seed,
)
from tests.support.calls import dynamodb_calls, s3_calls

pytestmark = [pytest.mark.ddblocal, pytest.mark.volume, pytest.mark.xdist_group(__name__)]

ORDERS = 1000
# The crash tests need a run that dies in its second batch of four: batches of 10 orders take the run
# through every step of each batch as batches of 100 do, in a tenth of the calls (the volume test keeps
# the thousand in batches of 100). The killed run's batches are larger, so that it is still busy with
# the rest when the test sees its second object and kills it.
CRASH_BATCH = 10
KILLED_BATCH = 25
# The killed run's time to live, so its lease (the archiver leases for the invocation's time left). The
# test does not wait it out (the next run's clock is past it), so it can be long: the lease must still
# hold when the test checks that a run meanwhile is refused, however loaded the machine. Its second
# object was written 10.7 s after it started on a 2-core machine at load 5.
KILLED_RUN_SECONDS = 120


@pytest.fixture(scope="module")
def moto_server(engine: DynamoDBLocal, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A moto server for S3, started as the local stack starts it (DynamoDB stays on DynamoDB Local)."""
    running = engines.start(tmp_path_factory.mktemp("engines"), search=False, dynamodb_endpoint=engine.endpoint)
    yield running.aws_endpoint
    running.stop()


@pytest.fixture
def bucket(tables: dict[str, str], moto_server: str, monkeypatch: pytest.MonkeyPatch) -> Bucket:
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_server)
    name = f"archive-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("ARCHIVE_BUCKET_NAME", name)
    reset_caches()
    create_archive_bucket(clients.s3(), name)
    return Bucket(clients.s3(), name)


def placed_long_ago(tables: dict[str, str], count: int) -> list[Order]:
    """``count`` orders placed over three months, the youngest 100 days ago (the cutoff is 90 days)."""
    step = timedelta(days=75) / count
    orders = old_orders(count, days_ago(100) - step * (count - 1), step)
    seed(clients.dynamodb(), tables["CommerceTable"], orders)
    return orders


@pytest.fixture
def old(tables: dict[str, str], bucket: Bucket) -> list[Order]:
    return placed_long_ago(tables, ORDERS)


def in_batches_of(size: int, tables: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> list[Order]:
    """Four batches' worth of old orders, and runs that archive them ``size`` at a time."""
    monkeypatch.setenv("ARCHIVE_BATCH_ORDERS", str(size))
    reset_caches()
    return placed_long_ago(tables, 4 * size)


def run(context: ScheduledContext | None = None) -> dict[str, Any]:
    return dict(order_archiver(sample("schedules/order_archive.json"), context or ScheduledContext()))


def hot(tables: dict[str, str]) -> list[dynamo.Item]:
    return hot_order_items(clients.dynamodb(), tables["CommerceTable"])


def left_over(tables: dict[str, str]) -> list[dynamo.Item]:
    return archive_partition_items(clients.dynamodb(), tables["CommerceTable"])


def exactly_once(bucket: Bucket, orders: list[Order]) -> bool:
    return bucket.header_counts() == Counter({order.order_id: 1 for order in orders})


def test_a_thousand_old_orders_end_in_s3_once_each_and_none_stays_hot(
    tables: dict[str, str], bucket: Bucket, old: list[Order]
) -> None:
    # when
    with dynamodb_calls() as calls, s3_calls() as s3:
        report = run()

    # then
    assert exactly_once(bucket, old)
    assert len(bucket.items()) == 2 * ORDERS  # each header and its line
    assert hot(tables) == []
    assert left_over(tables) == []
    batches = len(bucket.object_keys())
    assert report == {
        "outcome": "done",
        "batches": batches,
        "resumed": 0,
        "orders": 1000,
        "items": 2000,
        "kept": 0,
        "paying": 0,
        "unpaid": 0,
    }

    # and per order: its Query and its header's DeleteItem; per batch: the manifest's put, update and
    # delete, the object, the lines (25 a call); per run: the lease, the manifests' Query, the index pages
    shards = Counter(keys.order_age_shard(order.order_id) for order in old)
    per_batch_lines = [sum(1 for i in bucket.lines(key) if i["SK"] != keys.META) for key in bucket.object_keys()]
    assert calls.counts() == {
        "Query": 1 + sum(count // 100 + 1 for count in shards.values()) + ORDERS,
        "PutItem": 1 + batches,
        "UpdateItem": batches,
        "DeleteItem": ORDERS + batches + 1,
        "BatchWriteItem": sum(-(-lines // 25) for lines in per_batch_lines),
    }
    assert s3.counts() == {"PutObject": batches}
    print(f"archive of {ORDERS} orders: {batches} batches, {len(calls)} DynamoDB calls, {len(s3)} S3 calls")


@pytest.mark.parametrize("point", CRASH_POINTS, ids=str)
def test_a_run_killed_at_any_step_and_run_again_leaves_each_order_in_s3_once(
    tables: dict[str, str], bucket: Bucket, point: CrashPoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a run that dies in its second batch
    some_old = in_batches_of(CRASH_BATCH, tables, monkeypatch)
    client = clients.s3() if point.service == "s3" else clients.dynamodb()
    with crash_at(client, point.event, point.nth(CRASH_BATCH), point.when), pytest.raises(Crash):
        run()
    assert 0 < len({item["PK"] for item in hot(tables)}) < len(some_old)  # halfway

    # when the schedule runs it again
    report = run()

    # then
    assert exactly_once(bucket, some_old)
    assert hot(tables) == []
    assert left_over(tables) == []
    assert report["resumed"] == 1
    months = Counter(order.placed_at[:7] for order in some_old)
    assert len(bucket.object_keys()) == sum(-(-count // CRASH_BATCH) for count in months.values())


def test_a_run_sigkilled_mid_batch_in_its_own_process_is_finished_by_the_next(
    tables: dict[str, str], bucket: Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a run in a process of its own with KILLED_RUN_SECONDS to live: its lease (the invocation's
    # time) runs out that long after it began, well after it is killed even on a loaded machine
    some_old = in_batches_of(KILLED_BATCH, tables, monkeypatch)
    environment = {**os.environ, "ARCHIVE_STOP_MARGIN_SECONDS": "1", "PYTHONPATH": f"{cfn.ROOT}:{cfn.ROOT / 'shared'}"}
    began = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.archive_run", str(KILLED_RUN_SECONDS)],
        cwd=cfn.ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        # when it is killed (SIGKILL: no finally runs) once its second object is in S3: the first batch
        # is done by then, the second is written and being deleted (or just done), the rest not begun
        deadline = time.monotonic() + KILLED_RUN_SECONDS
        while len(bucket.object_keys()) < 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.poll() is None, "the run ended before it could be killed"
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=10) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()
    killed_with = {"hot orders": len({item["PK"] for item in hot(tables)}), "objects": len(bucket.object_keys())}
    job = {item["SK"]: item for item in left_over(tables)}
    print(f"killed mid-run after {time.monotonic() - began:.1f} s: {killed_with}, job items left: ", end="")
    print([(k, v.get("state")) for k, v in job.items()])
    assert keys.ARCHIVE_LEASE in job  # it died holding the job
    assert 0 < killed_with["hot orders"] < len(some_old)

    # and a run while the dead run's lease holds leaves everything alone; the next one after finishes
    # (run on a clock past the lease instead of waiting it out: the lease is compared with the runner's
    # clock, sent in the condition, so this is the run that comes once the lease has lapsed)
    assert run()["outcome"] == "busy"
    report = run_after(job[keys.ARCHIVE_LEASE]["held_until"])

    # then
    assert report["outcome"] == "done"
    assert exactly_once(bucket, some_old)
    assert hot(tables) == []
    assert left_over(tables) == []


def run_after(moment: str) -> dict[str, Any]:
    """A scheduled run whose clock reads a second past ``moment`` (and goes on from there)."""
    ahead = datetime.fromisoformat(moment) + timedelta(seconds=1) - utc_now()
    report = archive.run(
        bootstrap.archiver(), ScheduledContext().get_remaining_time_in_millis, lambda: utc_now() + ahead
    )
    return dict(archive.record_run(report))
