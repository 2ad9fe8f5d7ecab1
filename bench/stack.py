"""The commerce API handler over fresh tables in DynamoDB Local, and the local stack, for the benchmarks."""

import contextlib
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from local import dynamodb_local
from local.auth import SigningKey, issuer_for
from local.cfn import ROOT
from tests.support.client import ApiClient
from tests.support.tables import create_tables

# The function's configuration as the template gives it, pointed at DynamoDB Local.
ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "CURSOR_SECRET": "bench-cursor-secret",
    "POWERTOOLS_SERVICE_NAME": "shopfeed",
    "POWERTOOLS_METRICS_NAMESPACE": "shopfeed",
    "POWERTOOLS_LOG_LEVEL": "INFO",
}


@dataclass(frozen=True)
class Stack:
    api: ApiClient
    table: str
    engine: str
    tables: dict[str, str]  # every template table by logical id


@contextmanager
def commerce_stack() -> Iterator[Stack]:
    """Start DynamoDB Local, create the template's tables, and give the commerce API handler.

    Call it before anything in the process touched a shopfeed client or setting: both are cached
    per process (per Lambda container) on first use, and must see this environment. The handler's
    log and metric lines (JSON on stdout, which Lambda ships to CloudWatch) are written, as in
    Lambda, and dropped, so stdout carries only the report.
    """
    # Powertools warns on every request that adds no metric (reads); in a benchmark that is noise.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    engine = dynamodb_local.start()
    try:
        os.environ.update(ENVIRONMENT)
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = engine.endpoint
        from shopfeed.platform import clients

        names = create_tables(clients.dynamodb(), suffix=f"-bench-{uuid.uuid4().hex[:8]}")
        os.environ["COMMERCE_TABLE_NAME"] = names["CommerceTable"]
        # The user routes write both halves of a user (shopfeed.accounts): FeedTable too.
        os.environ["FEED_TABLE_NAME"] = names["FeedTable"]

        with redirect_stdout(io.StringIO()):
            # Imported here: Powertools' Logger binds its stream (stdout) when it is created.
            from functions.commerce_api.app import lambda_handler

            yield Stack(ApiClient(lambda_handler), names["CommerceTable"], engine.endpoint, names)
    finally:
        engine.stop()


@dataclass(frozen=True)
class LocalStack:
    """A running ``python -m local.stack``: its URL and a way to mint tokens it accepts."""

    url: str
    state_dir: Path

    def token(self, sub: str, *groups: str) -> str:
        return SigningKey.load_or_create(self.state_dir).mint(issuer_for(int(self.url.rsplit(":", 1)[1])), sub, groups)


@contextmanager
def local_stack(*options: str, startup_timeout_s: float = 120) -> Iterator[LocalStack]:
    """``make dev`` on a free port with its own state, without seed data or search; stopped as Ctrl-C does."""
    port = dynamodb_local.free_port()
    with tempfile.TemporaryDirectory(prefix="bench-local-stack-") as state:
        command = [sys.executable, "-m", "local.stack", "--port", str(port), "--state-dir", state]
        log = Path(state) / "stack.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [*command, "--no-seed", "--no-search", *options],
                cwd=ROOT,
                env={k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        try:
            stack = LocalStack(f"http://127.0.0.1:{port}", Path(state))
            _wait_until_healthy(stack, process, log, startup_timeout_s)
            yield stack
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=60)


def _wait_until_healthy(stack: LocalStack, process: "subprocess.Popen[bytes]", log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the local stack exited: {log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{stack.url}/__local/health", timeout=2):
            return
        time.sleep(0.2)
    raise RuntimeError(f"the local stack was not ready within {timeout_s} s")
