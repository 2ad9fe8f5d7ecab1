"""The commerce API handler over fresh tables in DynamoDB Local, and the local stack, for the benchmarks."""

import contextlib
import io
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from moto.server import ThreadedMotoServer

from local import dynamodb_local
from local.auth import SigningKey, issuer_for
from local.cfn import ROOT
from local.harness.client import ApiClient
from local.harness.tables import create_tables

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
    # DynamoDB Local on a loaded machine answers in seconds: a request budget's 1.5 s read timeout made
    # CreateTable time out, retry and fail as "preexisting" (load 12 on 2 cores). As the local stack does.
    "CALL_TIMEOUT_SCALE": "10",
    # The payment worker holds failed messages back on its queue; none fail here, so it is never called.
    "PAYMENT_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/PaymentQueue",
}


@dataclass(frozen=True)
class Stack:
    api: ApiClient  # the commerce API (and the user routes)
    feed_api: ApiClient
    table: str
    engine: str
    tables: dict[str, str]  # every template table by logical id
    engine_pid: int = 0  # DynamoDB Local's JVM


@contextmanager
def commerce_stack() -> Iterator[Stack]:
    """Start DynamoDB Local, create the template's tables, and give the API handlers.

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
        # The tables as the template hands them to the functions (the user routes write both).
        os.environ["COMMERCE_TABLE_NAME"] = names["CommerceTable"]
        os.environ["FEED_TABLE_NAME"] = names["FeedTable"]

        with redirect_stdout(io.StringIO()):
            # Imported here: Powertools' Logger binds its stream (stdout) when it is created.
            from functions.commerce_api.app import lambda_handler
            from functions.feed_api.app import lambda_handler as feed_handler

            yield Stack(
                ApiClient(lambda_handler),
                ApiClient(feed_handler),
                names["CommerceTable"],
                engine.endpoint,
                names,
                engine.process.pid,
            )
    finally:
        engine.stop()


@contextmanager
def moto_sqs() -> Iterator[str]:
    """SQS in a moto server on this machine, for the shared clients made inside (its endpoint)."""
    from shopfeed.platform import clients
    from shopfeed.platform.config import settings

    # The moto server logs every request: the report is on stdout.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=dynamodb_local.free_port(), verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        os.environ["AWS_ENDPOINT_URL_SQS"] = endpoint = f"http://{host}:{port}"
        # The endpoint changed: clients and settings are cached per process on first use.
        clients.reset()
        settings.cache_clear()
        yield endpoint
    finally:
        server.stop()
        del os.environ["AWS_ENDPOINT_URL_SQS"]
        clients.reset()
        settings.cache_clear()


@dataclass(frozen=True)
class LocalStack:
    """A running ``python -m local.stack``: its URL and a way to mint tokens it accepts."""

    url: str
    state_dir: Path

    @cached_property
    def signing_key(self) -> SigningKey:
        """Read once: reading the key checks it (0.1-0.2 s), minting a token takes milliseconds."""
        return SigningKey.load_or_create(self.state_dir)

    def token(self, sub: str, *groups: str) -> str:
        return self.signing_key.mint(issuer_for(int(self.url.rsplit(":", 1)[1])), sub, groups)

    def post(self, path: str, body: Any, sub: str, *groups: str, headers: Mapping[str, str] = {}) -> Any:
        """``POST path`` with a JSON body as ``sub``; the answer's JSON (an HTTP error raises)."""
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token(sub, *groups)}", "Content-Type": "application/json"}
            | dict(headers),
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read() or b"null")

    def page(self) -> Any:
        """The stack page (``GET /__local/stack``): resources, processes, functions."""
        with urllib.request.urlopen(f"{self.url}/__local/stack", timeout=30) as answer:
            return json.loads(answer.read())

    def table_environment(self) -> dict[str, str]:
        """The stack's own table names as the functions' settings read them, for code run beside it."""
        resources = self.page()["resources"]
        return {
            "COMMERCE_TABLE_NAME": resources["CommerceTable"]["name"],
            "FEED_TABLE_NAME": resources["FeedTable"]["name"],
        }


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
