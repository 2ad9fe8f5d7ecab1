"""The embedded AWS: the processes that stand in for DynamoDB, EventBridge, SQS, S3 and search.

- DynamoDB (with streams): Amazon DynamoDB Local by default; moto when Java or the npm package is
  missing (or ``--engine moto``), or any endpoint given with ``--dynamodb-endpoint``.
- Everything else AWS: one moto server (S3 form uploads checked against their POST policy first:
  ``local/moto_server.py``), in its own process so its request handling does not
  compete with the handlers for this process's GIL.
- Search: osmem-server, an in-memory OpenSearch-compatible engine.

Application code finds them through the standard ``AWS_ENDPOINT_URL_<SERVICE>`` variables
(``environment()``), so nothing in shared/ or functions/ knows it runs locally. Children die with
the stack: they are stopped on exit, and the ones started here also get SIGTERM from the kernel if
the stack is killed outright.
"""

import contextlib
import logging
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

from local import dynamodb_local

if TYPE_CHECKING:
    from osmem_server import OsmemServer

log = logging.getLogger("local.engines")

REGION = "us-east-1"
# moto accepts any credentials and DynamoDB Local keys its data by them: fixed dummies keep one
# database, and keep real credentials from the environment away from the local stack.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}
# How much longer the functions' AWS calls may wait here than in AWS: DynamoDB Local on a loaded
# two-core machine has taken over 5 s to answer, where the API's budget reads for 1.5 s.
CALL_TIMEOUT_SCALE = "4"
# The kernel sends the child SIGTERM when the stack dies, even by SIGKILL (util-linux's setpriv sets
# PR_SET_PDEATHSIG, then execs the command; without it children are only stopped on a clean exit).
_DIE_WITH_PARENT = ["setpriv", "--pdeathsig", "TERM", "--"] if shutil.which("setpriv") else []
_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=2, read_timeout=10)


@dataclass
class _Child:
    name: str
    pid: int
    stop: Callable[[], None]
    alive: Callable[[], bool]


@dataclass
class Engines:
    """The running engines and their endpoints."""

    aws_endpoint: str  # moto: EventBridge, SQS, S3, Secrets Manager and any other service
    dynamodb_endpoint: str
    dynamodb_engine: str  # what serves DynamoDB, for the banner
    search_endpoint: str | None = None
    # SES (API v2) for the functions: the stack's email sink (local/mail.py), once the stack knows its port.
    ses_endpoint: str | None = None
    _children: list[_Child] = field(default_factory=list)

    def environment(self) -> dict[str, str]:
        """The variables that point every AWS SDK in this process (and its children) at the engines."""
        return {
            **CREDENTIALS,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_EC2_METADATA_DISABLED": "true",
            # The functions' timeouts are sized for AWS; the engines here share two cores with the
            # functions (shopfeed.platform.clients, call_timeout_scale).
            "CALL_TIMEOUT_SCALE": CALL_TIMEOUT_SCALE,
            # Any service without its own variable goes to moto, never to a real AWS account.
            "AWS_ENDPOINT_URL": self.aws_endpoint,
            "AWS_ENDPOINT_URL_DYNAMODB": self.dynamodb_endpoint,
            "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": self.dynamodb_endpoint,
            "AWS_ENDPOINT_URL_EVENTBRIDGE": self.aws_endpoint,
            "AWS_ENDPOINT_URL_SQS": self.aws_endpoint,
            "AWS_ENDPOINT_URL_S3": self.aws_endpoint,
            "AWS_ENDPOINT_URL_SECRETS_MANAGER": self.aws_endpoint,
            **({"AWS_ENDPOINT_URL_SESV2": self.ses_endpoint} if self.ses_endpoint else {}),
        }

    def client(self, service: str) -> Any:
        """A boto3 client of ``service`` bound to its local engine (for the stack's own calls)."""
        local = service in ("dynamodb", "dynamodbstreams")
        return boto3.client(
            service,  # type: ignore[call-overload]
            endpoint_url=self.dynamodb_endpoint if local else self.aws_endpoint,
            region_name=REGION,
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            config=_CLIENT_CONFIG,
        )

    def processes(self) -> dict[str, int]:
        """The child processes by name, with their pids."""
        return {child.name: child.pid for child in self._children}

    def dead(self) -> list[str]:
        """Names of the children that exited on their own."""
        return [child.name for child in self._children if not child.alive()]

    def stop(self) -> None:
        """Stop every child, the last started first."""
        while self._children:
            child = self._children.pop()
            try:
                child.stop()
            except (OSError, subprocess.SubprocessError) as error:
                log.warning("stopping %s: %s", child.name, error)


def start(
    state_dir: Path,
    engine: str = "ddblocal",
    search: bool = True,
    dynamodb_endpoint: str | None = None,
) -> Engines:
    """Start the engines; on any failure the ones already running are stopped before raising."""
    logs = state_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    children: list[_Child] = []
    try:
        # moto first: it boots while DynamoDB Local's JVM starts.
        moto_port = dynamodb_local.free_port()
        # moto behind S3's POST-policy check (local/moto_server.py): moto alone stores any form upload.
        signer = f"{CREDENTIALS['AWS_ACCESS_KEY_ID']}={CREDENTIALS['AWS_SECRET_ACCESS_KEY']}"
        server = [sys.executable, str(Path(__file__).with_name("moto_server.py")), "--secret", signer]
        moto = _spawn("moto", [*server, "-H", "127.0.0.1", "-p", str(moto_port)], logs)
        children.append(_Child("moto", moto.pid, lambda: _terminate(moto), lambda: moto.poll() is None))
        aws_endpoint = f"http://127.0.0.1:{moto_port}"

        if dynamodb_endpoint:
            dynamodb_engine = f"DynamoDB at {dynamodb_endpoint}"
        elif engine == "ddblocal" and (reason := dynamodb_local.available()) is None:
            ddb = dynamodb_local.start()
            children.append(_Child("DynamoDB Local", ddb.process.pid, ddb.stop, lambda: ddb.process.poll() is None))
            dynamodb_endpoint, dynamodb_engine = ddb.endpoint, f"DynamoDB Local {_ddblocal_version()}"
        else:
            if engine == "ddblocal":
                log.warning("DynamoDB Local unavailable (%s): DynamoDB runs on moto instead", reason)
            dynamodb_endpoint, dynamodb_engine = aws_endpoint, "moto"

        _wait_for_port(moto_port, moto, "moto", logs / "moto.log")
        engines = Engines(aws_endpoint, dynamodb_endpoint, dynamodb_engine, _children=children)
        if search:
            engines.search_endpoint = _start_search(children)
        return engines
    except BaseException:
        for child in reversed(children):
            child.stop()
        raise


def _spawn(name: str, command: list[str], logs: Path) -> "subprocess.Popen[bytes]":
    with (logs / f"{name}.log").open("wb") as log_file:
        return subprocess.Popen(
            [*_DIE_WITH_PARENT, *command],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,  # a file, never a pipe nobody reads
            # Its own process group: Ctrl-C reaches the stack alone, which then stops children in order.
            process_group=0,
        )


def _terminate(process: "subprocess.Popen[bytes]") -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_for_port(
    port: int, process: "subprocess.Popen[bytes]", name: str, log_path: Path, timeout: float = 30
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited during startup: {log_path.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not answer on port {port} within {timeout} s (log: {log_path})")


def search_server() -> "OsmemServer":
    """osmem-server as the stack runs it, on a free port (the first-request bench starts its own)."""
    from osmem_server import OsmemServer

    # It also watches our pid and exits with us (--parent-pid).
    return OsmemServer.start(japanese=False, addr="127.0.0.1:0")


def _start_search(children: list[_Child]) -> str | None:
    try:
        from osmem_server import OsmemError
    except ImportError:
        log.warning("osmem-server is not installed: no local search engine")
        return None
    try:
        server = search_server()
    except OsmemError as error:
        log.warning("search engine did not start (%s): running without it", error)
        return None
    children.append(_Child("osmem", server.process.pid, server.close, lambda: server.process.poll() is None))
    return str(server.url)


def _ddblocal_version() -> str:
    path = dynamodb_local.jar()
    return path.parent.name.removeprefix("dynamodb_local_") if path else ""
