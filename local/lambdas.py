"""The template's functions, run the way Lambda runs them: each in its own execution environments.

``FunctionWorkers`` is what the stack runs: every function gets its own pool of worker processes
(``local/worker.py``), started with exactly the environment its template entry declares, each
serving one invocation at a time, as a Lambda container does. That one-at-a-time is not a choice:
Powertools keeps per-request state in module and class attributes (the logger's appended keys, the
metric set), so two requests in one process would cross. The pool size plays reserved concurrency:
invocations beyond it wait for a free worker. A function stalled in one pool never holds another's
invocations, and an invocation past the function's Timeout is stopped by killing its worker, whose
place a new one (a cold start) takes. With SnapStart (``FunctionSpec.snap_start``) the function's init
runs once, in its snapshot process, and every worker is restored from it (``_Snapshot``).

``LocalFunction`` runs a handler callable in this process, one invocation at a time: the tests of the
pollers and the gateway use it to drive small consumers without processes.
"""

import contextlib
import itertools
import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from local.faults import FaultSettings, Tally
from local.worker import LambdaContext

log = logging.getLogger("local.lambda")

Handler = Callable[[dict[str, Any], Any], Any]

WORKER = Path(__file__).resolve().parent / "worker.py"
INIT_TIMEOUT_S = 60.0  # Lambda allows 10 s of init; a busy two-core machine importing boto3 needs more


@dataclass(frozen=True)
class Invocation:
    """What a synchronous Invoke returns: the payload, or the function error that replaced it."""

    payload: Any = None
    error_type: str | None = None
    error_message: str = ""
    duration_ms: float = 0.0

    @property
    def failed(self) -> bool:
        return self.error_type is not None


class Function(Protocol):
    """What the gateway, pollers and schedules call: a function of the template by name."""

    name: str
    arn: str
    region: str
    account: str

    def invoke(self, event: Mapping[str, Any]) -> Invocation: ...


def _arn(name: str, region: str, account: str) -> str:
    return f"arn:aws:lambda:{region}:{account}:function:{name}"


class LocalFunction:
    """A handler callable run in this process, one invocation at a time (one execution environment)."""

    def __init__(
        self,
        name: str,
        handler: Handler,
        *,
        timeout_s: float = 3.0,
        memory_mb: int = 128,
        region: str = "us-east-1",
        account: str = "123456789012",
    ) -> None:
        self.name = name
        self.handler = handler
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.region = region
        self.account = account
        self.arn = _arn(name, region, account)
        self._busy = threading.Lock()

    def invoke(self, event: Mapping[str, Any]) -> Invocation:
        """Run the handler once with ``event``; an exception becomes an ``Unhandled`` function error.

        Events and results go through JSON, as between Lambda and its callers, so a handler cannot
        rely on sharing objects with the caller. The Timeout is reported, not enforced: a thread
        cannot be stopped mid-handler (``FunctionWorkers`` enforces it).
        """
        request = json.loads(json.dumps(event))
        with self._busy:
            started = time.monotonic()
            context = LambdaContext(self.name, self.arn, self.memory_mb, started + self.timeout_s)
            try:
                result = json.loads(json.dumps(self.handler(request, context)))
            except Exception as error:
                log.exception("%s failed", self.name)
                return Invocation(error_type=type(error).__name__, error_message=str(error), duration_ms=_ms(started))
        duration = _ms(started)
        if duration > self.timeout_s * 1000:
            log.warning("%s ran %.0f ms, longer than its Timeout of %s s", self.name, duration, self.timeout_s)
        return Invocation(payload=result, duration_ms=duration)


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000


@dataclass(frozen=True)
class FunctionSpec:
    """What a worker needs to run a function: its code, handler, layers, settings and environment."""

    name: str
    code_dir: Path
    handler: str
    environment: Mapping[str, str]
    layers: tuple[Path, ...] = ()
    timeout_s: float = 3.0
    memory_mb: int = 128
    region: str = "us-east-1"
    account: str = "123456789012"
    faults: FaultSettings | None = None  # inject AWS faults into the function's SDK calls (local/faults.py)
    # Lambda SnapStart (the template's SnapStart ApplyOn: PublishedVersions): init runs once, in a
    # snapshot, and every worker is restored from it (local/worker.py).
    snap_start: bool = False

    @property
    def arn(self) -> str:
        return _arn(self.name, self.region, self.account)

    def runtime_environment(self) -> dict[str, str]:
        """The variables the Lambda runtime sets, then the function's own (which win, as in AWS)."""
        return {
            "AWS_LAMBDA_FUNCTION_NAME": self.name,
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(self.memory_mb),
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{self.name}",
            "AWS_LAMBDA_LOG_STREAM_NAME": "local",
            "AWS_EXECUTION_ENV": f"AWS_Lambda_python{sys.version_info.major}.{sys.version_info.minor}",
            "AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start" if self.snap_start else "on-demand",
            "LAMBDA_TASK_ROOT": str(self.code_dir),
            "_HANDLER": self.handler,
            **self.environment,
        }


class FunctionInitError(Exception):
    """The handler could not be imported (Lambda's Runtime.ImportModuleError and friends)."""


class _Timeout(Exception):
    pass


class _Reader:
    """JSON lines from a process, one message at a time, read from ``fd`` with a deadline."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = b""

    def read(self, timeout_s: float) -> dict[str, Any]:
        """The next message; raises _Timeout, or EOFError when the other end closed."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                raise _Timeout()
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                raise EOFError("exited")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return dict(json.loads(line))


def _config(spec: FunctionSpec, number: int) -> dict[str, Any]:
    return {
        "name": spec.name,
        "arn": spec.arn,
        "memory_mb": spec.memory_mb,
        "code_dir": str(spec.code_dir),
        "handler": spec.handler,
        "layers": [str(p) for p in spec.layers],
        # Each worker draws its own faults: seeded by the stack's seed, the function and its number.
        "faults": spec.faults.for_worker(spec.name, number) if spec.faults else None,
        "snap_start": spec.snap_start,
    }


def _start(spec: FunctionSpec, number: int, channel: Any) -> "subprocess.Popen[bytes]":
    """A process of ``local/worker.py`` running ``spec``'s init, ``channel`` its stdin and stdout."""
    return subprocess.Popen(
        # -P: the worker's own directory (local/) stays off sys.path, as it is off Lambda's. No
        # parent-death signal as for the engines: the kernel ties it to the thread that started
        # the worker, which may be a request's. A worker ends when its stdin closes instead, which
        # the kernel does when the stack dies, however it dies.
        [sys.executable, "-P", str(WORKER), json.dumps(_config(spec, number))],
        stdin=channel,
        stdout=channel,
        env=dict(spec.runtime_environment()),
        cwd=spec.code_dir,
        # Its own process group: Ctrl-C reaches the stack, which stops workers after in-flight calls.
        process_group=0,
    )


class _Worker:
    """One execution environment: a worker process (started, or restored from a snapshot) and its pipes."""

    def __init__(
        self, pid: int, requests: IO[bytes], answers: IO[bytes], process: "subprocess.Popen[bytes] | None"
    ) -> None:
        self.pid = pid
        self._requests = requests
        self._answers = answers
        self._reader = _Reader(answers.fileno())
        self._process = process
        # A restored worker is the snapshot's child, not the stack's: it is signalled and awaited through
        # a pidfd, which names that process even after its pid is reused.
        self._pidfd: int | None = None
        if process is None:
            with contextlib.suppress(ProcessLookupError):  # gone already: a failed restore says why on its pipe
                self._pidfd = os.pidfd_open(pid)

    @classmethod
    def started(cls, spec: FunctionSpec, number: int) -> "_Worker":
        """A worker that runs init itself (on demand)."""
        process = _start(spec, number, subprocess.PIPE)
        assert process.stdin is not None
        assert process.stdout is not None
        return cls(process.pid, process.stdin, process.stdout, process)

    @classmethod
    def restored(cls, snapshot: "_Snapshot", spec: FunctionSpec, number: int) -> "_Worker":
        """A worker restored from ``snapshot``: its two pipes made here, their other ends handed to the fork."""
        requests_in, requests_out = os.pipe()
        answers_in, answers_out = os.pipe()
        try:
            pid = snapshot.restore({"worker": number}, [requests_in, answers_out])
        except BaseException:
            os.close(requests_out)
            os.close(answers_in)
            raise
        finally:  # the fork holds its own copies now
            os.close(requests_in)
            os.close(answers_out)
        return cls(pid, os.fdopen(requests_out, "wb"), os.fdopen(answers_in, "rb"), None)

    def read(self, timeout_s: float) -> dict[str, Any]:
        """The worker's next message; raises _Timeout, or EOFError when it exited."""
        try:
            return self._reader.read(timeout_s)
        except EOFError:
            status = self._process.wait() if self._process is not None else "a status only the snapshot saw"
            raise EOFError(f"exited with {status}") from None

    def send(self, message: Mapping[str, Any]) -> None:
        self._requests.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self._requests.flush()

    def stop(self) -> None:
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait()
        elif self._pidfd is not None:
            with contextlib.suppress(ProcessLookupError):  # it has exited already
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            select.select([self._pidfd], [], [], INIT_TIMEOUT_S)  # readable once it has exited
            os.close(self._pidfd)
            self._pidfd = None
        for pipe in (self._requests, self._answers):
            with contextlib.suppress(OSError):  # a request still buffered for a dead worker
                pipe.close()


class _Snapshot:
    """A function's SnapStart snapshot: a process that ran init once and forks each worker restored from it.

    Lambda publishes a version by running init and saving the environment's memory; every environment
    of that version resumes from the saved memory instead of running init. A fork is that here: each
    restored worker starts with what init built, shares its unchanged pages with the snapshot and the
    other workers (as the forked clients of the in-process benchmarks do), and runs the after-restore
    hooks before its first invocation. The stack talks to it over a Unix socket, which carries the
    restored worker's pipes (SCM_RIGHTS), not over stdin and stdout as to a worker."""

    def __init__(self, spec: FunctionSpec) -> None:
        ours, theirs = socket.socketpair()
        with theirs:
            self.process = _start(spec, 0, theirs)
        self._socket = ours
        self._reader = _Reader(ours.fileno())
        self._lock = threading.Lock()  # one restore at a time: each answer is the pid of its own fork

    def ready(self, timeout_s: float) -> dict[str, Any]:
        """The init's outcome: ``ready``, or ``init_error``."""
        return self._reader.read(timeout_s)

    def restore(self, restore: Mapping[str, Any], fds: list[int]) -> int:
        """Fork a worker that gets ``restore`` (its number) and ``fds`` (its pipes' ends); its pid."""
        with self._lock:
            socket.send_fds(self._socket, [json.dumps(restore).encode()], fds)
            return int(self._reader.read(INIT_TIMEOUT_S)["pid"])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._socket.close()


@dataclass
class WorkerStats:
    """Counters shown by ``GET /__local/stack``."""

    workers: int = 0
    cold_starts: int = 0  # inits run: each on-demand worker's, or the SnapStart snapshot's one
    restores: int = 0  # workers restored from the SnapStart snapshot
    invocations: int = 0
    errors: int = 0
    timeouts: int = 0


@dataclass(eq=False)  # compared and hashed by identity: schedules key on their function
class FunctionWorkers:
    """A function's pool of worker processes: up to ``size`` invocations at once, one per worker."""

    spec: FunctionSpec
    size: int = 1
    stats: WorkerStats = field(default_factory=WorkerStats)
    faults: Tally = field(default_factory=Tally)  # AWS calls and injected faults, as the workers report them

    def __post_init__(self) -> None:
        self.name = self.spec.name
        self.arn = self.spec.arn
        self.region = self.spec.region
        self.account = self.spec.account
        self._slots = threading.BoundedSemaphore(self.size)
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._numbers = itertools.count()
        self._snapshot: _Snapshot | None = None
        self._snapshot_lock = threading.Lock()
        self.stats.workers = self.size

    def start(self) -> None:
        """Start one warm worker; raises FunctionInitError when the handler does not import."""
        self._idle.append(self._spawn())

    def _spawn(self) -> _Worker:
        number = next(self._numbers)
        worker = self._restore(number) if self.spec.snap_start else _Worker.started(self.spec, number)
        with self._lock:
            self._all.add(worker)
            if self.spec.snap_start:
                self.stats.restores += 1
            else:
                self.stats.cold_starts += 1
        self._ready(worker.read, lambda: self._retire(worker), "the worker did not start")
        return worker

    def _restore(self, number: int) -> _Worker:
        snapshot = self._snapshot_taken()
        try:
            return _Worker.restored(snapshot, self.spec, number)
        except (_Timeout, EOFError, OSError) as error:  # the snapshot died, or is stuck
            raise FunctionInitError(f"{self.name}: the worker was not restored ({error or 'timed out'})") from None

    def _snapshot_taken(self) -> _Snapshot:
        """The function's snapshot, its init run on the first call."""
        with self._snapshot_lock:
            if self._snapshot is None:
                snapshot = _Snapshot(self.spec)
                with self._lock:
                    self.stats.cold_starts += 1
                self._ready(snapshot.ready, snapshot.stop, "the snapshot's init did not finish")
                self._snapshot = snapshot
            return self._snapshot

    def _ready(self, read: Callable[[float], dict[str, Any]], discard: Callable[[], None], failing: str) -> None:
        """Wait for an init's (or restore's) outcome; raises FunctionInitError, after ``discard``, when it failed."""
        try:
            ready = read(INIT_TIMEOUT_S)
        except (_Timeout, EOFError) as error:
            discard()
            raise FunctionInitError(f"{self.name}: {failing} ({error or 'init timed out'})") from None
        self.faults.add(ready.get("faults") or {})
        if "init_error" in ready:
            discard()
            failure = ready["init_error"]
            raise FunctionInitError(f"{self.name}: {failure['error_type']}: {failure['error_message']}")

    def _read(self, worker: _Worker, timeout_s: float) -> dict[str, Any]:
        message = worker.read(timeout_s)
        self.faults.add(message.get("faults") or {})
        return message

    def _retire(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)
        worker.stop()

    def invoke(self, event: Mapping[str, Any]) -> Invocation:
        """Run one invocation in a free worker (waiting for one when all are busy)."""
        with self._slots:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
            started = time.monotonic()
            try:
                worker = worker or self._spawn()
            except FunctionInitError as error:
                return self._failed("Runtime.ImportModuleError", str(error), started)
            request_id = str(uuid.uuid4())
            try:
                worker.send({"event": event, "timeout_s": self.spec.timeout_s, "request_id": request_id})
                answer = self._read(worker, self.spec.timeout_s)
            except _Timeout:
                # Lambda stops the environment; its next invocation is a cold start.
                self._retire(worker)
                with self._lock:
                    self.stats.timeouts += 1
                message = f"RequestId: {request_id} Error: Task timed out after {self.spec.timeout_s:.2f} seconds"
                log.error("%s: %s", self.name, message)
                return self._failed("Sandbox.Timedout", message, started)
            except (EOFError, OSError) as error:
                self._retire(worker)
                return self._failed("Runtime.ExitError", f"the worker exited: {error}", started)
            with self._lock:
                self._idle.append(worker)
                self.stats.invocations += 1
        if "error_type" in answer:
            log.error("%s failed: %s", self.name, answer.get("trace") or answer["error_message"])
            return self._failed(answer["error_type"], answer["error_message"], started)
        return Invocation(payload=answer["payload"], duration_ms=_ms(started))

    def _failed(self, error_type: str, message: str, started: float) -> Invocation:
        with self._lock:
            self.stats.errors += 1
        return Invocation(error_type=error_type, error_message=message, duration_ms=_ms(started))

    def pids(self) -> list[int]:
        """The workers' processes (not the snapshot's: it runs no invocation)."""
        with self._lock:
            return sorted(w.pid for w in self._all)

    def snapshot_pid(self) -> int | None:
        with self._snapshot_lock:
            return self._snapshot.process.pid if self._snapshot is not None else None

    def stop(self) -> None:
        """Stop every worker (an invocation in flight ends as a Runtime.ExitError), and the snapshot."""
        with self._lock:
            workers, self._all, self._idle = list(self._all), set(), []
        for worker in workers:
            worker.stop()
        with self._snapshot_lock:
            if self._snapshot is not None:
                self._snapshot.stop()
                self._snapshot = None
