"""The local stack's HTTP API against the handler called in-process: ``GET /products/{id}`` (goal ≥ 0.8× at
one client, ≥ 0.9× at four).

Both sides read the same item of the same table in the same warm DynamoDB Local: the local stack is
started on the benchmark's engine (``--dynamodb-endpoint``) and the in-process clients are pointed at
the stack's own CommerceTable, so only the path differs. A client is a process (bench/clients.py); the
in-process side calls the handler with a payload-2.0 event, the HTTP side goes through `make dev`'s
server, JWT authorizer, gateway and one of the function's worker processes, each client on one
keep-alive connection.

The in-process clients are forks of one process that imported the handler, and share its memory: so
do workers restored from a SnapStart snapshot (``--parameter SnapStart=true``, as prod deploys), and
the goals are measured against those. Workers that each run init (on demand, `make dev`'s default)
each hold their own copy, and are measured beside them, each path paired with its own in-process rounds.
"""

import io
import itertools
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench import instant_function
from bench.clients import InProcess, Measured, OverHttp, Rate, Request, Rounds, Spread, Workload, rate, rounds
from bench.markdown import table
from bench.stack import LocalStack, Stack, local_stack
from local import cfn
from local.auth import AUDIENCE, JwtAuthorizer, SigningKey, issuer_for
from local.dynamodb_local import free_port
from local.gateway import ApiGateway, HttpRequest, RouteTable, build_event, http_response
from local.harness.factories import product_body
from local.lambdas import FunctionSpec, FunctionWorkers
from local.schedules import Scheduler
from local.server import LocalPages, LocalServer, read_head

READER = "U-BENCH-READER"
PRODUCT = "P-LOAD-HTTP"
LOCAL_WORKERS = 4  # CommerceApiFunction's worker processes in the local stack (--function-workers)
CLIENTS = (1, 4)
GOALS = {1: 0.8, 4: 0.9}
ROUNDS = 5
WINDOW_S = 3.0  # each rate is the calls answered in this window
HTTP = f"local HTTP, {LOCAL_WORKERS} workers"  # each runs init itself (on demand: `make dev`'s default)
RESTORED = f"{HTTP} restored from a SnapStart snapshot"  # the path the goals are for
# The local stack's options for each path: the template's SnapStart parameter, as samconfig's prod sets it.
PATHS: dict[str, tuple[str, ...]] = {RESTORED: ("--parameter", "SnapStart=true"), HTTP: ()}
# The functions the stack alone is measured with (bench/instant_function.py), by what they do.
ALONE = {
    "answers at once": "handler",
    f"answers after {instant_function.WAIT_S * 1000:.0f} ms asleep": "after_a_wait",
}


def beside(stack: Stack, *options: str) -> AbstractContextManager[LocalStack]:
    """The local stack on the benchmark's own DynamoDB Local, with the commerce API's workers."""
    return local_stack(
        "--dynamodb-endpoint", stack.engine, "--function-workers", f"CommerceApiFunction={LOCAL_WORKERS}", *options
    )


def warm_every_worker(workload: Workload, environment: Mapping[str, str]) -> None:
    """One unmeasured window with as many clients as the function has workers: the stack starts one
    warm worker per function and the rest on demand, and a cold start inside a measured window would
    be measured as the path's cost."""
    rate(workload, LOCAL_WORKERS, 1.0, environment)


@dataclass(frozen=True)
class Reads:
    """``GET path``, again and again."""

    path: str

    def of(self, client: int) -> Iterator[Request]:
        return itertools.repeat(("GET", self.path, None, {}))


@dataclass
class LocalHttp(Measured):
    """In-process (baseline) and HTTP rounds per client count, and the stack's pieces timed alone."""

    components: dict[str, float] = field(default_factory=dict)  # piece -> CPU µs per request
    # the stack alone's rounds: function (ALONE) -> clients -> rounds
    alone: dict[str, dict[int, list[Rate]]] = field(default_factory=dict)
    # the on-demand workers' rounds (HTTP), each paired with in-process rounds of their own
    on_demand: dict[int, Rounds] = field(default_factory=dict)

    def below_goal(self) -> list[str]:
        return self.shortfalls(RESTORED, GOALS, "local HTTP (restored workers) ÷ in-process")

    def markdown(self) -> str:
        rows: list[list[Any]] = []
        for path, by_clients, workers in (
            (RESTORED, self.rounds, "restored from a SnapStart snapshot"),
            (HTTP, self.on_demand, "each running init (on demand)"),
        ):
            for clients, taken in by_clients.items():
                ratio = taken.ratios(path).text(2)
                rows.append(
                    [
                        workers,
                        clients,
                        taken.rates(path).text(),
                        taken.rates().text(),
                        f"**{ratio}**" if path == RESTORED else ratio,
                    ]
                )
        return "\n".join(
            [
                table(
                    [
                        f"local HTTP, {LOCAL_WORKERS} workers",
                        "clients",
                        "local HTTP, GET /products/{id} per s",
                        "in-process handler per s, same rounds",
                        "÷ in-process, median (min–max)",
                    ],
                    rows,
                    "lrrrr",
                ),
                "",
                f"{self.count} paired rounds of {WINDOW_S:.0f} s per side, path and client count; each round's ratio "
                "divides two rates measured back to back; rates are medians (min–max) over the rounds. Goals, for the "
                "restored workers: ≥ 0.8× at one client, ≥ 0.9× at four. "
                f"{self.load_text()} "
                "(four clients, four workers, the stack and DynamoDB Local share them: at four clients both sides "
                "are bound by the cores, and the ratio is the CPU each request costs on either path)."
                + self.unexpected(),
                *self._memory(),
                "",
                "### What the gap is made of",
                "",
                self._gap(),
            ]
        )

    def _memory(self) -> list[str]:
        """What the two kinds of worker cost at four clients, beside the in-process clients' handler."""
        restored, on_demand = self.rounds.get(4), self.on_demand.get(4)
        if restored is None or on_demand is None:
            return []
        forked = grouped(restored.cpu_ms()).get("clients", 0.0)
        shared = grouped(restored.cpu_ms(RESTORED)).get("function workers", 0.0)
        own = grouped(on_demand.cpu_ms(HTTP)).get("function workers", 0.0)
        return [
            "",
            f"At four clients the handler's CPU per request was {forked:.2f} ms in the in-process clients, "
            f"{shared:.2f} ms in workers restored from a snapshot and {own:.2f} ms in workers that each ran init. "
            "The in-process clients are forks of one process that imported the handler, as restored workers are "
            "forks of the snapshot: both share the pages they do not write, where workers that ran init each hold "
            "a copy of the same code and data of their own, and contend for the caches with it. So the goals are "
            "measured on restored workers, like for like (decision 272 gives the runs); `make dev` starts "
            "on-demand workers, as a dev deploy runs them (SnapStart off), and "
            '`make dev ARGS="--parameter SnapStart=true"` runs them as prod does.',
        ]

    def _gap_text(self, in_process: Mapping[str, float], over_http: Mapping[str, float], wall: float) -> str:
        """The wall-time gap at one client, split into the CPU each process adds and the waiting between them."""
        stack = over_http.get("stack", 0) - in_process.get("stack", 0)  # net of the pollers' own work
        worker = over_http.get("function workers", 0) - in_process.get("clients", 0)
        client = over_http.get("clients", 0)
        engine = over_http.get("DynamoDB Local", 0) - in_process.get("DynamoDB Local", 0)
        cpu = sum(over_http.values()) - sum(in_process.values())
        pieces = sum(us for name, us in self.components.items() if "first request" not in name) / 1000
        jwt = next((us for name, us in self.components.items() if "cached" in name), 0.0)
        waiting = wall - cpu
        if waiting >= 0:
            spent = f"{cpu:.2f} ms of it is CPU"
            rest = (
                f"The other {waiting:.2f} ms is the process hop's waiting: a request wakes three more processes in "
                "turn (client → stack → worker → stack → client) than in-process (client → DynamoDB Local → client), "
                "and on a loaded machine each wake-up waits for a free core."
            )
        else:
            spent = f"The processes spend {cpu:.2f} ms more CPU on it"
            rest = (
                f"That is {-waiting:.2f} ms more than the wall time it adds: part of it ran beside the request on the "
                "other core (DynamoDB Local's and the stack's other threads), off its path."
            )
        return (
            f"At one client a request over HTTP takes {wall:.2f} ms more wall time than in-process. "
            f"{spent}: the stack process {stack:.2f} ms (the pieces below, HTTP parsing, route, "
            f"JWT check, event, JSON, answer and log line, are {pieces:.2f} ms of it; the JWT check of a token seen "
            f"before is {jwt:.0f} µs; the rest is the connection loop's socket reads and writes, the pipe's system "
            f"calls and waking, which the stack alone shows below), the worker {worker:.2f} ms beyond the same "
            f"handler run in the client's process (the event and answer as JSON, the runtime loop, waking), the "
            f"HTTP client {client:.2f} ms, DynamoDB Local {engine:+.2f} ms. " + rest
        )

    def _gap(self) -> str:
        one = self.rounds[1]
        in_process, over_http = grouped(one.cpu_ms()), grouped(one.cpu_ms(RESTORED))
        names = sorted(set(in_process) | set(over_http), key=PROCESS_ORDER.index)
        rows = [[name, f"{in_process.get(name, 0):.2f}", f"{over_http.get(name, 0):.2f}"] for name in names]
        cpu_in, cpu_http = sum(in_process.values()), sum(over_http.values())
        rows.append(["**all**", f"**{cpu_in:.2f}**", f"**{cpu_http:.2f}**"])
        wall_in, wall_http = 1000 / one.rates().median, 1000 / one.rates(RESTORED).median
        rows.append(["wall time per request", f"{wall_in:.2f}", f"{wall_http:.2f}"])
        parts = [[name, f"{micro:.0f}"] for name, micro in self.components.items()]
        return "\n".join(
            [
                "CPU per request at one client, by process (ms, median over the rounds; from /proc, so a loaded "
                "machine stretches the wall time but not these):",
                "",
                table(["process", "in-process handler", RESTORED], rows, "lrr"),
                "",
                self._gap_text(in_process, over_http, wall_http - wall_in),
                "",
                "The stack's share, piece by piece (CPU µs per request, measured in this process on the stack's own "
                "code, 2,000 calls each):",
                "",
                table(["piece", "µs"], parts, "lr"),
                *self.alone_table(),
            ]
        )

    def alone_table(self) -> list[str]:
        """The stack alone's rounds as report lines (none when it was not measured)."""
        if not self.alone:
            return []
        rows = []
        for function, by_clients in self.alone.items():
            for clients, taken in by_clients.items():
                spreads = _alone_cpu_us(taken).values()
                rows.append(
                    [function, clients, Spread([r.per_second for r in taken]).text(), *(s.text() for s in spreads)]
                )
        return [
            "",
            "The stack alone (CPU µs per request by process, median (min–max) over the rounds): its server, gateway "
            "and authorizer on the template's routes, every function a pool of "
            f"{LOCAL_WORKERS} workers of one that does no work (bench/instant_function.py), so no DynamoDB and no "
            "handler's work, under the same HTTP clients. The function answers at once, or after sleeping about as "
            "long as the real read takes, so that every process waits idle between requests as it does beside "
            "the real handler:",
            "",
            table(["function", "clients", "requests/s", "stack", "function workers", "HTTP clients"], rows, "lrrrrr"),
            *self._waking(),
        ]

    def _waking(self) -> list[str]:
        """What the two functions' rounds at one client say about waking an idle process."""
        at_once, asleep = (self.alone.get(function, {}).get(1) for function in ALONE)
        if not at_once or not asleep:
            return []
        stack, worker, client = (spread.median for spread in _alone_cpu_us(at_once).values())
        stack_asleep, worker_asleep, client_asleep = (spread.median for spread in _alone_cpu_us(asleep).values())
        return [
            "",
            f"At one client the same code costs the stack {stack:.0f} µs per request behind the function that "
            f"answers at once and {stack_asleep:.0f} µs behind the one that sleeps first (the worker {worker:.0f} "
            f"and {worker_asleep:.0f} µs, the HTTP client {client:.0f} and {client_asleep:.0f} µs). Nothing else runs, "
            "so the difference is the waiting itself: a process woken from idle starts cold (caches, branch "
            "predictors; on a virtual machine like this one an idle core most likely goes back to the host). "
            "Beside the real handler every process of the path waits so, and a request over HTTP wakes the stack "
            "twice (its request, the worker's answer) and a worker once (its event), which a request in-process "
            "never does.",
        ]


def measure(stack: Stack, count: int = ROUNDS) -> LocalHttp:
    load_before = os.getloadavg()[0]
    results: dict[str, dict[int, Rounds]] = {}
    parts: dict[str, float] = {}
    for path, options in PATHS.items():
        with beside(stack, *options) as running:
            if not results:  # the stacks share the benchmark's table: the first one writes the item
                running.post("/products", product_body(PRODUCT), "U-BENCH-ADMIN", "admin")
                parts = components(running)
            in_process = InProcess(Reads(f"/products/{PRODUCT}"), READER, 200)
            over_http = OverHttp(Reads(f"/products/{PRODUCT}"), running.url, running.token(READER), 200)
            environment = running.table_environment()
            warm_every_worker(over_http, environment)
            watch = watched(running.page()["processes"], stack.engine_pid)
            results[path] = {
                clients: rounds(in_process, {path: over_http}, clients, count, WINDOW_S, environment, watch)
                for clients in CLIENTS
            }
    load = (load_before, os.getloadavg()[0])
    return LocalHttp(results[RESTORED], load, parts, stack_alone(count), on_demand=results[HTTP])


def stack_alone(count: int = ROUNDS) -> dict[str, dict[int, list[Rate]]]:
    """The stack's own CPU per request, without DynamoDB or a handler's work, by the function behind it
    (``ALONE``): its server, gateway and authorizer on the template's routes, run in this process, every
    route's function a pool of ``LOCAL_WORKERS`` workers of bench/instant_function.py, under the HTTP
    clients of the rounds. The stack's request log goes to /dev/null as the stack's goes to its console."""
    access = logging.getLogger("local.api")
    level, sink = access.level, logging.StreamHandler(open(os.devnull, "w"))  # noqa: SIM115 - closed below
    access.setLevel(logging.INFO)
    access.addHandler(sink)
    try:
        return {function: _alone(handler, count) for function, handler in ALONE.items()}
    finally:
        access.removeHandler(sink)
        access.setLevel(level)
        sink.close()


def _alone(handler: str, count: int) -> dict[int, list[Rate]]:
    with tempfile.TemporaryDirectory(prefix="bench-stack-alone-") as state:
        key = SigningKey.load_or_create(Path(state))
        port = free_port()
        issuer = issuer_for(port)
        routes = cfn.http_api_routes()
        code = Path(instant_function.__file__)
        spec = FunctionSpec("InstantFunction", code.parent, f"{code.stem}.{handler}", {"PATH": os.environ["PATH"]})
        pool = FunctionWorkers(spec, LOCAL_WORKERS)
        pool.start()
        verifier = JwtAuthorizer(issuer, [AUDIENCE], {key.kid: key.public_key})
        gateway = ApiGateway(
            routes, {r.function: pool.invoke for r in routes}, {r.authorizer: verifier for r in routes if r.authorizer}
        )
        pages = LocalPages(threading.Event(), issuer, key, dict, Scheduler([]), Path(state) / "openapi.json", "")
        server = LocalServer(("127.0.0.1", port), gateway, pages)
        threading.Thread(target=server.serve_forever, name="stack alone", daemon=True).start()
        try:
            workload = OverHttp(
                Reads(f"/products/{PRODUCT}"), f"http://127.0.0.1:{port}", key.mint(issuer, READER), 200
            )
            warm_every_worker(workload, {})
            watch = {"stack": os.getpid(), **{f"worker {n}": pid for n, pid in enumerate(pool.pids())}}
            return {
                clients: [rate(workload, clients, WINDOW_S, {}, watch) for _ in range(count)] for clients in CLIENTS
            }
        finally:
            server.shutdown()
            server.server_close()
            pool.stop()


def _alone_cpu_us(taken: list[Rate]) -> dict[str, Spread]:
    """The stack alone's CPU µs per request over rounds: the stack, its workers summed, the clients."""
    cpu = [_summed_workers(r.cpu_ms()) for r in taken]
    return {name: Spread([c.get(name, 0.0) * 1000 for c in cpu]) for name in ("stack", "workers", "clients")}


def _summed_workers(cpu: Mapping[str, float]) -> dict[str, float]:
    """The stack alone's workers as one figure."""
    result: dict[str, float] = {}
    for name, ms in cpu.items():
        key = "workers" if name.startswith("worker ") else name
        result[key] = result.get(key, 0.0) + ms
    return result


def grouped(cpu: Mapping[str, float]) -> dict[str, float]:
    """The API's workers as one figure (a request runs in one of them), the other functions' as another."""
    result: dict[str, float] = {}
    for name, ms in cpu.items():
        if name.startswith("CommerceApiFunction worker"):
            name = "function workers"
        elif " worker " in name:
            name = "other functions' workers"
        result[name] = result.get(name, 0.0) + ms
    return result


# The processes a request can cost CPU in, in the order it meets them.
MOTO = "moto server (SQS, EventBridge, S3)"
PROCESS_ORDER = ["clients", "stack", "function workers", "DynamoDB Local", "other functions' workers", MOTO]


def watched(processes: Mapping[str, int], engine_pid: int) -> dict[str, int]:
    """The stack process, every function's workers, the engine and the stack's moto server, by the names
    the report uses (an order's events go through moto: its share is the consumers')."""
    workers = {name: pid for name, pid in processes.items() if " worker " in name}
    return {"stack": processes["stack"], "DynamoDB Local": engine_pid, MOTO: processes["moto"], **workers}


def components(running: LocalStack, calls: int = 2000) -> dict[str, float]:
    """CPU µs per request of each piece the stack adds to a ``GET /products/{id}``, run alone on the stack's
    own code with the request the HTTP clients send."""
    issuer = issuer_for(int(str(urlsplit(running.url).port)))
    # The stack's own key, read while it ran (its state directory is gone once it stopped).
    key = running.signing_key
    token = running.token(READER)
    authorizer = JwtAuthorizer(issuer, [AUDIENCE], {key.kid: key.public_key})
    head = f"GET /products/{PRODUCT} HTTP/1.1\r\nHost: {urlsplit(running.url).netloc}\r\n"
    head += f"Accept-Encoding: identity\r\nAuthorization: Bearer {token}\r\n\r\n"
    raw = head.encode()
    request = HttpRequest("GET", f"/products/{PRODUCT}", [("Host", "127.0.0.1"), ("Authorization", f"Bearer {token}")])
    routes = RouteTable(cfn.http_api_routes())
    route, params = routes.match("GET", request.target) or (None, {})
    assert route is not None
    headers = {"host": "127.0.0.1", "authorization": f"Bearer {token}"}
    claims = authorizer.authorize(headers).claims
    event = build_event(route, params, request, headers, claims, None, "id")
    answer = {"payload": {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": "{}" * 120}}

    def parse() -> None:
        stream = io.BytesIO(raw)
        stream.readline()
        read_head(stream.readline)

    # The request's log line as the stack writes it (local/stack.py's format), into memory: the formatting
    # and logging's record, not the terminal's speed.
    access = logging.Logger("local.api")
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)-10s %(message)s", "%H:%M:%S"))
    access.addHandler(handler)

    def first_check() -> None:
        JwtAuthorizer(issuer, [AUDIENCE], {key.kid: key.public_key}).authorize(headers)

    def pipe() -> None:
        json.loads(json.dumps({"event": event}, separators=(",", ":")))
        json.loads(json.dumps(answer, separators=(",", ":")))

    pieces: dict[str, Callable[[], Any]] = {
        "HTTP parsing (request line and header fields, server.read_head)": parse,
        "route selection (RouteTable.match)": lambda: routes.match("GET", request.target),
        "JWT check, a token seen before (cached)": lambda: authorizer.authorize(headers),
        "JWT check, a token's first request (signature verified)": first_check,
        "payload-2.0 event (build_event)": lambda: build_event(route, params, request, headers, claims, None, "id"),
        "event and answer through the pipe as JSON (both ends)": pipe,
        "HTTP answer from the payload (http_response)": lambda: http_response(answer["payload"]),
        "the request's log line (logging)": lambda: access.info("%s %s %d %.0fms", "GET", request.target, 200, 9.0),
    }
    return {name: _cpu_us(piece, calls) for name, piece in pieces.items()}


def _cpu_us(piece: Callable[[], Any], calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        piece()
    return (time.process_time() - started) * 1e6 / calls
