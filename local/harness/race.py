"""Concurrent requests as Lambda serves them: each concurrent request in its own container.

A container here is a process holding its own copy of the function. Threads cannot stand in for
containers: Powertools' resolver keeps the event it is serving in a class attribute
(``BaseRouter.current_event``) that every resolver in a process shares, so two threads serving
requests at once act on each other's events (seen here: one buyer's order sent twice and answered
once as a replay, another buyer's never sent). A Lambda container serves one request at a time.

Containers fork from a server that loaded the function once (container_init.py), take the test's
environment, serve a warm-up call, then wait at one barrier, so the calls under test really start
together and race on DynamoDB, not on Python start-up.
"""

import importlib
import json
import multiprocessing
import os
import queue
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from local import cfn
from local.harness.client import Answer, ApiClient, LambdaContext

# The containers' calls are waited for as long as every unanswered container is still alive: on a
# loaded machine 500 orders on DynamoDB Local have taken 5 minutes (a fixed 120 s wait failed such a
# run that was still making progress). A container that died without answering fails the test at the
# next poll; one that hangs fails it at the deadline, long enough for any machine that still works.
_POLL_SECONDS = 5
_DEADLINE_SECONDS = 1200
_CONTEXT = multiprocessing.get_context("forkserver")
_PRELOADED = ["local.harness.container_init", "local.harness.race"]


@dataclass(frozen=True)
class Call:
    """One request as a client sends it: method, path, JSON body, headers, and who calls."""

    method: str
    path: str
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    sub: str | None = "U100"
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class Invoke:
    """One invocation of a function that is not behind the API (a queue worker) with its event; its
    answer is the handler's result as JSON, with status 200."""

    function: str
    event: Mapping[str, Any]


@dataclass(frozen=True)
class Served:
    answer: Answer
    started: float  # time.monotonic() when the call began: one clock for every process of a machine
    seconds: float  # the handler call, as the client in the container saw it


CONTENTION = "https://shopfeed.dev/problems/contention"


def settled(client: ApiClient, call: Call, answer: Answer, tries: int = 20) -> Answer:
    """``answer``, or, while it says "send it again" (409 contention, 503), the answer of ``call`` sent
    again as it was (same caller, same Idempotency-Key: a request whose answer was lost is answered).

    On this machine the containers and DynamoDB Local share two cores, and under load a call can run
    out of its budget after its write was applied: only the resend tells what happened."""
    for _ in range(tries):
        if answer.status != 503 and (answer.status != 409 or answer.json["type"] != CONTENTION):
            return answer
        caller = client.as_user(call.sub, *call.groups)
        answer = caller.request(call.method, call.path, call.body, headers=dict(call.headers))
    return answer


def all_at_once(calls: Sequence[Call | Invoke], warm_up: Call | None = None) -> list[Answer]:
    """Each call in its own container, all released together; answers in the order of ``calls``."""
    return [served.answer for (served,) in in_containers([[call] for call in calls], warm_up)]


def in_containers(shares: Sequence[Sequence[Call | Invoke]], warm_up: Call | None = None) -> list[list[Served]]:
    """One container per share, serving its calls one after another; all start together.

    The containers get this process's environment (table, endpoint, settings) as it is now.
    """
    _CONTEXT.set_forkserver_preload(_PRELOADED)
    barrier = _CONTEXT.Barrier(len(shares))
    results = _CONTEXT.Queue()
    containers = [
        _CONTEXT.Process(
            target=_container,
            args=(index, list(share), warm_up, dict(os.environ), barrier, results),
            daemon=True,
        )
        for index, share in enumerate(shares)
    ]
    for container in containers:
        container.start()
    served: dict[int, list[Served]] = {}
    deadline = time.monotonic() + _DEADLINE_SECONDS
    gone: set[int] = set()
    try:
        while len(served) < len(containers):
            try:
                index, answers, failure = results.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                gone = _fail_if_gone(containers, served, gone, deadline)
                continue
            if failure:
                raise AssertionError(f"container {index} failed:\n{failure}")
            served[index] = answers
    finally:
        for container in containers:
            container.join(timeout=5)
            if container.is_alive():
                container.kill()
    return [served[index] for index in range(len(shares))]


def _fail_if_gone(containers: Sequence[Any], served: Mapping[int, object], gone: set[int], deadline: float) -> set[int]:
    """No answer came for a poll: fail if a container that had already exited at the previous poll has
    still not answered (an answer put just before exiting gets one more poll to arrive), or the
    deadline passed. Returns the containers gone now."""
    now_gone = {i for i, c in enumerate(containers) if i not in served and c.exitcode is not None}
    if now_gone & gone:
        raise AssertionError(f"containers {sorted(now_gone & gone)} exited without answering")
    if time.monotonic() > deadline:
        raise AssertionError(f"{len(containers) - len(served)} containers still running after {_DEADLINE_SECONDS} s")
    return now_gone


def enter_container(environment: Mapping[str, str]) -> None:
    """A fresh container process takes ``environment`` as its own; the function's log and metric lines
    (what Lambda ships to CloudWatch) go nowhere."""
    os.environ.clear()
    os.environ.update(environment)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)


def _container(
    index: int,
    calls: list[Call | Invoke],
    warm_up: Call | None,
    environment: dict[str, str],
    barrier: Any,
    results: Any,
) -> None:
    try:
        enter_container(environment)
        if warm_up is not None:
            _serve(warm_up)
        barrier.wait(timeout=_DEADLINE_SECONDS)
        results.put((index, [_serve(call) for call in calls], None))
    except BaseException:
        results.put((index, [], traceback.format_exc()))
        raise


def _handler(function: str) -> Any:
    return importlib.import_module(cfn.handler_module(function)).lambda_handler


def _serve(call: Call | Invoke) -> Served:
    started = time.monotonic()
    if isinstance(call, Invoke):
        result = _handler(call.function)(dict(call.event), LambdaContext(function_name=call.function))
        return Served(Answer(200, {}, json.dumps(result)), started, time.monotonic() - started)
    # The function template.yaml routes the call to.
    client = ApiClient(_handler(cfn.function_for(call.method, call.path)), call.sub, call.groups)
    answer = client.request(call.method, call.path, call.body, headers=dict(call.headers))
    return Served(answer, started, time.monotonic() - started)
