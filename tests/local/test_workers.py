"""Functions run in their own worker processes, as Lambda runs them in their own containers.

The probe function (tests/local/functions/probe) keeps each request in a module attribute, as
Powertools does, and can stall, sleep, raise or meet other invocations at a rendezvous. Every test
of a pool runs twice: with workers that each run init (on demand), and with workers restored from
the function's SnapStart snapshot.
"""

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from local.lambdas import FunctionInitError, FunctionSpec, FunctionWorkers, Invocation
from tests.e2e.conftest import alive

FUNCTIONS = Path(__file__).parent / "functions"
DEADLOCK_S = 30  # only a bound for a broken build: a healthy one answers at once


@pytest.fixture
def pools() -> Iterator[list[FunctionWorkers]]:
    started: list[FunctionWorkers] = []
    yield started
    for pool in started:
        pool.stop()


@pytest.fixture(params=["on-demand", "snap-start"])
def initialization(request: pytest.FixtureRequest) -> str:
    """How the pools' workers start: each running init, or restored from a SnapStart snapshot."""
    return str(request.param)


@pytest.fixture
def workers(pools: list[FunctionWorkers], initialization: str) -> Any:
    """Starts a pool of the probe function (or another one in tests/local/functions)."""

    def start(name: str, size: int = 1, *, code: str = "probe", timeout_s: float = 60, **environment: str) -> Any:
        spec = FunctionSpec(
            name=name,
            code_dir=FUNCTIONS / code,
            handler="app.handler",
            environment=environment,
            timeout_s=timeout_s,
            snap_start=initialization == "snap-start",
        )
        pool = FunctionWorkers(spec, size)
        pools.append(pool)
        pool.start()
        return pool

    return start


def in_background(pool: FunctionWorkers, event: dict[str, Any]) -> tuple[threading.Thread, list[Invocation]]:
    results: list[Invocation] = []
    thread = threading.Thread(target=lambda: results.append(pool.invoke(event)), daemon=True)
    thread.start()
    return thread, results


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + DEADLOCK_S
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


def test_a_stalled_consumer_never_stalls_the_api(workers: Any, tmp_path: Path) -> None:
    # given a consumer whose invocation is stalled in its worker
    consumer, api = workers("CommerceStreamFunction"), workers("CommerceApiFunction")
    started, release = tmp_path / "started", tmp_path / "release"
    stalled, _ = in_background(consumer, {"do": "stall", "started": str(started), "release": str(release)})
    wait_for(started)

    # when the API is invoked meanwhile
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(api.invoke, {"do": "answer", "id": "api"}).result(timeout=DEADLOCK_S)

    # then it answers while the consumer is still stalled
    assert not answer.failed
    assert stalled.is_alive()
    release.touch()
    stalled.join(DEADLOCK_S)


def test_concurrent_requests_run_side_by_side_and_each_gets_its_own_response(workers: Any, tmp_path: Path) -> None:
    # given a function with three workers
    api = workers("CommerceApiFunction", 3)

    # when three requests arrive together, each waiting inside the handler until all three are in
    events = [{"do": "meet", "id": f"request-{n}", "rendezvous": str(tmp_path), "parties": 3, "n": n} for n in range(3)]
    with ThreadPoolExecutor(3) as pool:
        answers = list(pool.map(api.invoke, events, timeout=DEADLOCK_S))

    # then they ran at the same time, in three processes, and no response crossed to another request
    assert [a.payload["id"] for a in answers] == ["request-0", "request-1", "request-2"]
    assert len({a.payload["pid"] for a in answers}) == 3


def test_invocations_beyond_the_worker_count_wait_for_a_free_worker(workers: Any) -> None:
    # given a function with one worker
    api = workers("CommerceApiFunction", 1)

    # when eight requests arrive at once
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(api.invoke, [{"do": "answer", "id": str(n)} for n in range(8)], timeout=DEADLOCK_S))

    # then each is answered, one after the other by the same process
    assert [a.payload["id"] for a in answers] == [str(n) for n in range(8)]
    assert len({a.payload["pid"] for a in answers}) == 1


def test_an_invocation_past_the_timeout_is_stopped_and_the_next_one_gets_a_fresh_worker(workers: Any) -> None:
    # given a function with a one-second Timeout
    job = workers("SweeperFunction", timeout_s=1)
    first = job.invoke({"do": "answer"}).payload["pid"]

    # when an invocation runs longer
    late = job.invoke({"do": "sleep", "seconds": DEADLOCK_S})

    # then it ends as Lambda's timeout error, and the next invocation runs in a new process
    assert late.error_type == "Sandbox.Timedout"
    assert "Task timed out after 1.00 seconds" in late.error_message
    assert job.invoke({"do": "answer"}).payload["pid"] != first
    assert job.stats.timeouts == 1


def test_a_handler_error_is_a_function_error_and_the_worker_stays(workers: Any) -> None:
    # given a warm worker
    api = workers("CommerceApiFunction")
    pid = api.invoke({"do": "answer"}).payload["pid"]

    # when the handler raises
    failed = api.invoke({"do": "raise"})

    # then the invocation fails with the exception's type and message; the worker serves the next one
    assert (failed.error_type, failed.error_message) == ("ValueError", "told to raise")
    assert api.invoke({"do": "answer"}).payload["pid"] == pid


def test_a_function_sees_exactly_its_own_environment(workers: Any, initialization: str) -> None:
    # given a variable in the stack's process that no function declares
    os.environ["STACK_ONLY_VARIABLE"] = "leak"
    try:
        # when two functions with their own variables run
        api = workers("CommerceApiFunction", TABLE_NAME="CommerceTable")
        stream = workers("CommerceStreamFunction", EVENT_BUS_NAME="shopfeed-dev")
        api_env = api.invoke({"do": "environment"}).payload
        stream_env = stream.invoke({"do": "environment"}).payload
    finally:
        del os.environ["STACK_ONLY_VARIABLE"]

    # then each sees its own variables and the runtime's, and nothing else
    assert api_env["TABLE_NAME"] == "CommerceTable"
    assert "EVENT_BUS_NAME" not in api_env
    assert stream_env["EVENT_BUS_NAME"] == "shopfeed-dev"
    assert "TABLE_NAME" not in stream_env
    assert (api_env["AWS_LAMBDA_FUNCTION_NAME"], api_env["_HANDLER"]) == ("CommerceApiFunction", "app.handler")
    assert api_env["AWS_LAMBDA_INITIALIZATION_TYPE"] == initialization
    assert "STACK_ONLY_VARIABLE" not in api_env


def test_a_function_whose_import_fails_is_reported_at_start(workers: Any) -> None:
    with pytest.raises(FunctionInitError, match="a_module_that_does_not_exist"):
        workers("BrokenFunction", code="broken")


def test_stopping_the_pool_ends_its_workers(workers: Any) -> None:
    # given a pool with two busy-then-idle workers
    api = workers("CommerceApiFunction", 2)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(api.invoke, [{"do": "sleep", "seconds": 0.2, "id": uuid.uuid4().hex} for _ in range(2)]))
    pids = [*api.pids(), *filter(None, [api.snapshot_pid()])]

    # when the pool stops
    api.stop()

    # then none of its processes is left (nor its snapshot, with SnapStart)
    assert pids
    assert not [pid for pid in pids if alive(pid)]


def test_a_worker_started_by_a_finished_thread_keeps_serving(workers: Any, pools: list[FunctionWorkers]) -> None:
    # given a worker started by a request's thread, which then ended
    starter = threading.Thread(target=workers, args=("CommerceApiFunction",))
    starter.start()
    starter.join(DEADLOCK_S)
    (api,) = pools

    # when it is invoked from another thread
    answer = api.invoke({"do": "answer", "id": "later"})

    # then it still runs
    assert answer.payload["id"] == "later"


def test_a_worker_that_dies_mid_invocation_fails_it_and_is_replaced(workers: Any) -> None:
    # given a warm worker
    api = workers("CommerceApiFunction")
    pid = api.invoke({"do": "answer"}).payload["pid"]

    # when its process dies during an invocation
    died = api.invoke({"do": "exit"})

    # then that invocation fails as Lambda reports an exited runtime, and the next gets a new worker
    assert died.error_type == "Runtime.ExitError"
    assert api.invoke({"do": "answer"}).payload["pid"] != pid


def test_init_runs_in_every_worker_on_demand_and_once_with_snap_start(
    workers: Any, initialization: str, tmp_path: Path
) -> None:
    # given a function with three workers, whose init notes its process and registers runtime hooks
    inits = tmp_path / "inits"
    api = workers("CommerceApiFunction", 3, INIT_LOG=str(inits), HOOKS="1")

    # when three requests keep all three workers busy at once
    rendezvous = tmp_path / "meet"
    rendezvous.mkdir()
    events = [{"do": "meet", "id": f"request-{n}", "rendezvous": str(rendezvous), "parties": 3} for n in range(3)]
    with ThreadPoolExecutor(3) as pool:
        pids = {a.payload["pid"] for a in pool.map(api.invoke, events, timeout=DEADLOCK_S)}
    runtimes = [api.invoke({"do": "runtime"}).payload for _ in range(3)]

    # then on demand each worker ran init and no hook; with SnapStart init ran once, in the snapshot,
    # whose before-snapshot hook every worker inherited, and each worker ran the after-restore hook itself
    assert len(pids) == 3
    initialized = [int(line) for line in inits.read_text().split()]
    if initialization == "on-demand":
        assert sorted(initialized) == sorted(pids)
        assert all(r["snapshotted"] == r["restored"] == [] for r in runtimes)
        assert (api.stats.cold_starts, api.stats.restores) == (3, 0)
    else:
        assert initialized == [api.snapshot_pid()]
        assert not pids & set(initialized)
        assert all(r["snapshotted"] == initialized and r["restored"] == [r["pid"]] for r in runtimes)
        assert (api.stats.cold_starts, api.stats.restores) == (1, 3)


def test_a_connection_init_opened_is_closed_in_every_restored_worker(
    workers: Any, initialization: str, tmp_path: Path
) -> None:
    # given a server, and a function whose init connects to it
    with socket.create_server(("127.0.0.1", 0)) as server:
        host, port = server.getsockname()
        server.settimeout(DEADLOCK_S)
        api = workers("CommerceApiFunction", 2, CONNECT_AT_INIT=f"{host}:{port}")
        accepted, _ = server.accept()
        accepted.settimeout(DEADLOCK_S)

        # when both workers look at init's connection
        (tmp_path / "meet").mkdir()
        meet = {"do": "meet", "rendezvous": str(tmp_path / "meet"), "parties": 2}
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(api.invoke, [meet | {"id": str(n)} for n in range(2)], timeout=DEADLOCK_S))
        states = {api.invoke({"do": "connection"}).payload["connection"] for _ in range(2)}

        # then an on-demand worker keeps its own open; with SnapStart the snapshot's was closed before
        # any worker was restored (Lambda restores no connection), so no two workers share a live one
        if initialization == "on-demand":
            assert states == {"open"}
        else:
            assert states == {"closed"}
            assert accepted.recv(1) == b""  # the server saw it closed
        accepted.close()


def test_an_after_restore_hook_that_fails_fails_the_restore(pools: list[FunctionWorkers]) -> None:
    # given a function with SnapStart whose after-restore hook raises
    spec = FunctionSpec("CommerceApiFunction", FUNCTIONS / "probe", "app.handler", {"HOOKS": "fail"}, snap_start=True)
    pool = FunctionWorkers(spec, 1)
    pools.append(pool)

    # when its first worker is restored, then the restore fails with the hook's error
    with pytest.raises(FunctionInitError, match="told to fail the restore"):
        pool.start()
