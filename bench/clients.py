"""Clients in processes of their own, released together, each calling one workload for a window; and
the rounds that pair two such rates so that their ratio, not either rate, is what a run reports.

A client is a process, not a thread: the in-process side runs the handler, and a handler serves one
request at a time per process (local/harness/race.py says why), so four in-process clients are four
processes; the HTTP and raw-boto3 sides get the same, so no side shares a GIL with another client.
"""

import json
import multiprocessing
import os
import queue
import socket
import statistics
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol
from urllib.parse import urlsplit

from local.harness.client import ApiClient
from local.harness.race import enter_container

_CONTEXT = multiprocessing.get_context("forkserver")
# What every client would otherwise import for itself (the functions and the SDK's model), loaded once
# in the fork server; the same list as the race harness, which shares the server.
_PRELOADED = ["local.harness.container_init", "local.harness.race"]
# A client that does not start within this long fails the run instead of hanging it.
_TIMEOUT_S = 180


class Workload(Protocol):
    """What a client process calls, again and again. Picklable: it crosses into the client process,
    where ``prepare`` (untimed) builds the call; the call returns the HTTP status it got."""

    @property
    def expected(self) -> int:
        """The status of a call that counts."""

    def prepare(self, client: int, clients: int) -> Callable[[], int]: ...


# One request as a client sends it: method, path, JSON body (or None) and headers beyond authorization.
Request = tuple[str, str, Any, Mapping[str, str]]


class Requests(Protocol):
    """The requests one client sends, one after another (picklable, like a workload)."""

    def of(self, client: int) -> Iterator[Request]: ...


@dataclass(frozen=True)
class InProcess:
    """Requests through the commerce API's handler, called in the client's own process as ``sub``."""

    requests: Requests
    sub: str
    expected: int

    def prepare(self, client: int, clients: int) -> Callable[[], int]:
        from functions.commerce_api.app import lambda_handler

        caller = ApiClient(lambda_handler).as_user(self.sub)
        stream = self.requests.of(client)

        def call() -> int:
            method, path, body, headers = next(stream)
            return caller.request(method, path, body, headers=dict(headers)).status

        return call


@dataclass(frozen=True)
class OverHttp:
    """Requests to ``url`` over one keep-alive connection (TCP_NODELAY on) with a bearer ``token``.

    Written on the socket, not with http.client: a load generator's own CPU is taken from the two cores
    the stack it measures runs on, and http.client's (its request building, and the email package's
    parser for the answer's header fields) was 0.23-0.30 ms per request beside the real handler, a
    quarter of what the HTTP path added, charged to the stack by the ratio; this one's is 0.07-0.10.
    It writes the request in one send and reads the answer by its Content-Length, as load generators
    do (wrk, h2load); the stack answers every request with one. It reconnects when an answer closes
    the connection."""

    requests: Requests
    url: str
    token: str
    expected: int

    def prepare(self, client: int, clients: int) -> Callable[[], int]:
        address = urlsplit(self.url)
        target = (str(address.hostname), int(address.port or 80))
        connection = _Connection(target)
        stream = self.requests.of(client)
        fields = f"Host: {address.netloc}\r\nAuthorization: Bearer {self.token}\r\n"

        def call() -> int:
            method, path, body, headers = next(stream)
            head = f"{method} {path} HTTP/1.1\r\n{fields}" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            if body is None:
                return connection.exchange(f"{head}\r\n".encode())
            data = json.dumps(body).encode()
            head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
            return connection.exchange(head.encode() + data)

        return call


class _Connection:
    """One keep-alive HTTP/1.1 connection: a request's bytes out, the status back, the body read and dropped."""

    def __init__(self, address: tuple[str, int]) -> None:
        self._address = address
        self._socket: socket.socket | None = None
        self._answers: BinaryIO | None = None

    def exchange(self, request: bytes) -> int:
        if self._socket is None or self._answers is None:
            self._socket = socket.create_connection(self._address, timeout=_TIMEOUT_S)
            self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._answers = self._socket.makefile("rb")
        self._socket.sendall(request)
        status_line = self._answers.readline()
        parts = status_line.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
            raise ConnectionError(f"not an HTTP answer: {status_line!r}")
        length: int | None = None
        close = False
        while (line := self._answers.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection":
                close = value.strip().lower() == b"close"
        if length is None:
            raise ConnectionError(f"an answer without Content-Length: {status_line!r}")
        if len(self._answers.read(length)) != length:
            raise ConnectionError("the connection closed inside an answer's body")
        if close:
            self._answers.close()
            self._socket.close()
            self._socket = self._answers = None
        return int(parts[1])


@dataclass(frozen=True)
class Rate:
    """Calls answered with the expected status per second, from the first client's start to the last one's end."""

    answered: int
    seconds: float
    others: Mapping[int, int] = field(default_factory=dict)  # unexpected statuses and their counts
    # CPU seconds spent in the window: "clients" (the client processes themselves), then each watched process
    cpu: Mapping[str, float] = field(default_factory=dict)

    @property
    def per_second(self) -> float:
        return self.answered / self.seconds

    def cpu_ms(self) -> dict[str, float]:
        """CPU milliseconds per answered call, by process."""
        return {name: seconds * 1000 / max(self.answered, 1) for name, seconds in self.cpu.items()}


def rate(
    workload: Workload,
    clients: int,
    window_s: float,
    environment: Mapping[str, str],
    watch: Mapping[str, int] | None = None,
) -> Rate:
    """``clients`` processes calling ``workload`` for ``window_s`` each, released together after one
    warm-up call each; ``environment`` is laid over this process's for the clients. The CPU time of the
    ``watch`` processes (name -> pid) over the window is counted beside the clients' own."""
    _CONTEXT.set_forkserver_preload(_PRELOADED)
    barrier = _CONTEXT.Barrier(clients)
    results = _CONTEXT.Queue()
    variables = dict(os.environ) | dict(environment)
    processes = [
        _CONTEXT.Process(
            target=_client,
            args=(workload, n, clients, _Start(variables, barrier, window_s, results, dict(watch or {}))),
            daemon=True,
        )
        for n in range(clients)
    ]
    for process in processes:
        process.start()
    windows: list[tuple[float, float, dict[int, int], dict[str, float]]] = []
    deadline = time.monotonic() + _TIMEOUT_S + window_s
    try:
        while len(windows) < clients:
            try:
                index, window, failure = results.get(timeout=1)
            except queue.Empty:
                if time.monotonic() > deadline or any(p.exitcode not in (None, 0) for p in processes):
                    raise RuntimeError("a client died or hung before reporting") from None
                continue
            if failure:
                raise RuntimeError(f"client {index} failed:\n{failure}")
            windows.append(window)
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
    statuses: Counter[int] = sum((Counter(w[2]) for w in windows), Counter())
    answered = statuses.pop(workload.expected, 0)
    started = min(w[0] for w in windows)
    ended = max(w[1] for w in windows)
    cpu: Counter[str] = sum((Counter(w[3]) for w in windows), Counter())
    return Rate(answered, ended - started, dict(statuses), dict(cpu))


@dataclass(frozen=True)
class _Start:
    """What every client of one rate shares: the environment, the barrier, the window, the results queue."""

    environment: dict[str, str]
    barrier: Any
    window_s: float
    results: Any
    watch: dict[str, int]  # processes whose CPU time the first client samples around its window


def _client(workload: Workload, index: int, clients: int, start: _Start) -> None:
    results, window_s = start.results, start.window_s
    try:
        enter_container(start.environment)
        call = workload.prepare(index, clients)
        call()
        start.barrier.wait(timeout=_TIMEOUT_S)
        watched = {name: process_cpu(pid) for name, pid in start.watch.items()} if index == 0 else {}
        statuses: Counter[int] = Counter()
        own = time.process_time()
        started = time.monotonic()
        deadline = started + window_s
        while time.monotonic() < deadline:
            statuses[call()] += 1
        ended = time.monotonic()
        cpu = {"clients": time.process_time() - own}
        cpu |= {
            name: process_cpu(pid) - before
            for name, pid in start.watch.items()
            if (before := watched.get(name)) is not None
        }
        results.put((index, (started, ended, dict(statuses), cpu), None))
    except BaseException:
        results.put((index, None, traceback.format_exc()))
        raise


def process_cpu(pid: int) -> float:
    """The CPU seconds (user and system) process ``pid`` has used so far, from Linux's /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Spread:
    """Samples of one figure over rounds: median and min–max."""

    samples: Sequence[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def text(self, digits: int = 0) -> str:
        low, high = min(self.samples), max(self.samples)
        return f"{self.median:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"


@dataclass
class Rounds:
    """Rounds of paths beside a baseline, measured back to back: each round's ratio divides two rates
    taken under the same load, so a machine that slows between rounds moves both."""

    baseline: list[Rate] = field(default_factory=list)
    measured: dict[str, list[Rate]] = field(default_factory=dict)  # path -> its rate in each round

    def rates(self, path: str | None = None) -> Spread:
        """The baseline's rates (no path) or a measured path's, over rounds."""
        return Spread([r.per_second for r in (self.baseline if path is None else self.measured[path])])

    def ratios(self, path: str) -> Spread:
        return Spread([m.per_second / b.per_second for b, m in zip(self.baseline, self.measured[path], strict=True)])

    def cpu_ms(self, path: str | None = None) -> dict[str, float]:
        """CPU milliseconds per call by process, median over rounds, for the baseline (no path) or a path."""
        taken = self.baseline if path is None else self.measured[path]
        names = sorted({name for r in taken for name in r.cpu})
        return {name: statistics.median(r.cpu_ms().get(name, 0.0) for r in taken) for name in names}

    def others(self) -> Counter[int]:
        """Unexpected statuses over every round of every path (none in a clean run)."""
        every = [*self.baseline, *(rate for rates in self.measured.values() for rate in rates)]
        return sum((Counter(r.others) for r in every), Counter())


@dataclass
class Measured:
    """Rounds per client count, and the machine's load around them."""

    rounds: dict[int, Rounds]
    load: tuple[float, float]  # the 1-minute load average before and after

    @property
    def count(self) -> int:
        return len(next(iter(self.rounds.values())).baseline)

    def shortfalls(self, path: str, goals: Mapping[int, float], what: str) -> list[str]:
        """A line for each client count whose median ratio of ``path`` is below its goal."""
        return [
            f"{what} at {taken.ratios(path).median:.2f}× with {clients} client(s), below the {goals[clients]}× goal"
            for clients, taken in self.rounds.items()
            if taken.ratios(path).median < goals[clients]
        ]

    def unexpected(self) -> str:
        others = sum((taken.others() for taken in self.rounds.values()), Counter[int]())
        return f" Unexpected answers: {dict(others)}." if others else ""

    def load_text(self) -> str:
        return f"Load average (1 min) {self.load[0]:.1f} before, {self.load[1]:.1f} after, on {os.cpu_count()} cores"


def rounds(
    baseline: Workload,
    measured: Mapping[str, Workload],
    clients: int,
    count: int,
    window_s: float,
    environment: Mapping[str, str] | None = None,
    watch: Mapping[str, int] | None = None,
) -> Rounds:
    """``count`` rounds of the baseline and each measured path; the path that goes first rotates, so
    none always meets the load (stream consumers, a JVM collecting garbage) another left behind."""
    result = Rounds(measured={path: [] for path in measured})
    paths: list[str | None] = [None, *measured]
    for number in range(count):
        shift = number % len(paths)
        for path in paths[shift:] + paths[:shift]:
            workload = baseline if path is None else measured[path]
            taken = rate(workload, clients, window_s, environment or {}, watch)
            (result.baseline if path is None else result.measured[path]).append(taken)
    return result
