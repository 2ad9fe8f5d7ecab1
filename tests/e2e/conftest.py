"""End to end: the whole local stack (``python -m local.stack``) in a subprocess, driven over HTTP.

One stack per session, on free ports with its own state directory, so it never meets a developer's
running ``make dev``. It is stopped with SIGINT, as Ctrl-C would, and the teardown checks that none
of its child processes (DynamoDB Local, moto, osmem) outlived it.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests

from local.auth import SigningKey, issuer_for
from local.cfn import ROOT
from local.dynamodb_local import free_port
from tests.conftest import work_unit

# A browser app's origin the session's stack allows (AllowedOrigins): another loopback address, so the
# page served from it and the API are of different origins. tests/e2e/test_stack.py serves it.
APP_ORIGIN = f"http://127.0.0.2:{free_port()}"
STARTUP_TIMEOUT_S = 120  # DynamoDB Local takes ~2 s; a loaded CI machine, much more
EVENT_TIMEOUT_S = 20


@dataclass
class LocalStack:
    """The running stack: its URL, its token key and issuer, and what its stack page reports."""

    url: str
    process: "subprocess.Popen[bytes]"
    state_dir: Path
    log: Path
    http: requests.Session = field(default_factory=requests.Session)

    @property
    def issuer(self) -> str:
        return issuer_for(int(self.url.rsplit(":", 1)[1]))

    @cached_property
    def signing_key(self) -> SigningKey:
        """The stack's key, read once. Reading it checks the RSA key (0.1-0.2 s on two loaded cores),
        where minting a token takes milliseconds: read per token, the like storm's thousand users took
        232 s before their first like."""
        return SigningKey.load_or_create(self.state_dir)

    def token(self, sub: str, *groups: str, **claims: Any) -> str:
        """A token of the stack's issuer; ``claims`` adds any (``email``, ``email_verified``)."""
        return self.signing_key.mint(self.issuer, sub, groups, **claims)

    def page(self) -> dict[str, Any]:
        return dict(self.http.get(f"{self.url}/__local/stack", timeout=10).json())

    def aws(self, service: str) -> Any:
        """A boto3 client of the stack's moto server."""
        return boto3.client(
            service,  # type: ignore[call-overload]
            endpoint_url=self.page()["endpoints"]["aws"],
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )

    def dynamodb(self) -> Any:
        """A boto3 DynamoDB client of the stack's engine (to write what the API never would)."""
        return boto3.client(
            "dynamodb",
            endpoint_url=self.page()["endpoints"]["dynamodb"],
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


@dataclass
class Client:
    """Requests to the stack's API as one user."""

    stack: LocalStack
    token: str | None

    def request(self, method: str, path: str, **options: Any) -> requests.Response:
        headers = dict(options.pop("headers", None) or {})
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return self.stack.http.request(method, self.stack.url + path, headers=headers, timeout=30, **options)

    def get(self, path: str, **options: Any) -> requests.Response:
        return self.request("GET", path, **options)

    def post(self, path: str, **options: Any) -> requests.Response:
        return self.request("POST", path, **options)

    def put(self, path: str, **options: Any) -> requests.Response:
        return self.request("PUT", path, **options)

    def delete(self, path: str, **options: Any) -> requests.Response:
        return self.request("DELETE", path, **options)


class EventInbox:
    """Everything a queue received during the session (tests share the queues), as parsed JSON bodies."""

    def __init__(self, sqs: Any, queue_url: str) -> None:
        self._sqs, self._url = sqs, queue_url
        self.events: list[dict[str, Any]] = []

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], count: int = 1, timeout_s: float = EVENT_TIMEOUT_S
    ) -> list[dict[str, Any]]:
        """The received messages that match, once ``count`` of them arrived (or the timeout passed)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = [e for e in self.events if predicate(e)]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            self._receive()

    def _receive(self) -> None:
        page = self._sqs.receive_message(QueueUrl=self._url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for message in page.get("Messages", []):
            self.events.append(json.loads(message["Body"]))
            self._sqs.delete_message(QueueUrl=self._url, ReceiptHandle=message["ReceiptHandle"])


def _start(state_dir: Path, options: tuple[str, ...]) -> LocalStack:
    port = free_port()
    log = state_dir / "stack.log"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | {"PYTHONUNBUFFERED": "1"}
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "local.stack", "--port", str(port), "--state-dir", str(state_dir)),
                # Home feeds read the celebrity registry on every first page, not once per 30 s: a
                # test sees a new celebrity's post at once.
                *("--parameter", "PullAuthorsCacheSeconds=0"),
                # A failed payment message comes back after 1 s, 2, 4, 8 (not 30 s, 60, ...): a
                # provider outage reaches PaymentDLQ in seconds.
                *("--parameter", "PaymentRetrySeconds=1"),
                *options,
            ],
            cwd=ROOT,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    stack = LocalStack(f"http://127.0.0.1:{port}", process, state_dir, log)
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the local stack exited with {process.returncode}:\n{stack.log_tail()}", pytrace=False)
        with contextlib.suppress(requests.RequestException):
            if stack.http.get(f"{stack.url}/__local/health", timeout=2).status_code == 200:
                return stack
        time.sleep(0.2)
    _stop(stack)
    pytest.fail(f"the local stack was not ready within {STARTUP_TIMEOUT_S} s:\n{stack.log_tail()}", pytrace=False)


def _stop(stack: LocalStack) -> int:
    stack.process.send_signal(signal.SIGINT)
    try:
        return stack.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        stack.process.kill()
        stack.process.wait()
        return -9


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# The faulted stack of test_faults.py and test_soak.py (xdist group "faults"): one AWS call attempt in
# twenty of every function fails as AWS fails it.
FAULT_RATE, FAULT_SEED = 0.05, 7


@pytest.fixture(scope="session")
def faulted_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with running_stack(
        tmp_path_factory.mktemp("faulted-stack"), "--faults", str(FAULT_RATE), "--fault-seed", str(FAULT_SEED)
    ) as stack:
        yield stack
    # At exit the stack says what the faults amounted to, so a run can be judged and played again.
    assert f"faults (rate {FAULT_RATE}, seed {FAULT_SEED}):" in stack.log.read_text(), stack.log_tail()


@pytest.fixture(scope="session")
def local_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with running_stack(tmp_path_factory.mktemp("local-stack"), "--parameter", f"AllowedOrigins={APP_ORIGIN}") as stack:
        yield stack


# The session's stacks, each used by the tests of one xdist group, which run one after another on one
# worker. A stack stops after its group's last test rather than when the worker's session ends: idle
# for the rest of the run it would still cost its pollers' CPU (decision 259).
SESSION_STACKS = ("local_stack", "faulted_stack")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield
    if not isinstance(item, pytest.Function) or (nextitem is not None and work_unit(nextitem) == work_unit(item)):
        return
    for name in SESSION_STACKS:
        if name in item.fixturenames:
            # Finishing a fixture early is what pytest does when a parametrized one changes: the
            # fixtures built on it finish first, and a later test asking for it would build it again.
            item._fixtureinfo.name2fixturedefs[name][-1].finish(item._request)  # type: ignore[arg-type] # reads .node


@contextlib.contextmanager
def running_stack(state_dir: Path, *options: str) -> Iterator[LocalStack]:
    """A local stack of its own, seeded, stopped at the end with every child process it started;
    ``options`` are more of ``python -m local.stack``'s (``--faults 0.1``)."""
    stack = _start(state_dir, options)
    children = {name: pid for name, pid in stack.page()["processes"].items() if name != "stack"}
    stack.http.close()
    yield stack
    code = _stop(stack)
    assert code == 0, f"the local stack exited with {code}:\n{stack.log_tail()}"
    deadline = time.monotonic() + 10
    while (orphans := [n for n, pid in children.items() if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not orphans, f"still running after the stack stopped: {orphans}"


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium for headless rendering, installed with apt-get where missing (a fresh CI machine)."""
    if found := shutil.which("chromium"):
        return found
    root = [] if os.geteuid() == 0 else ["sudo", "-n"]
    install = [*root, "apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "--no-install-recommends"]
    environment = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run([*install, "chromium"], env=environment, capture_output=True, check=False).returncode:
        # A machine whose package lists were never fetched knows no chromium yet.
        subprocess.run([*root, "apt-get", "update"], env=environment, capture_output=True, check=True)
        subprocess.run([*install, "chromium"], env=environment, capture_output=True, check=True)
    found = shutil.which("chromium")
    assert found, "apt-get installed chromium, but it is not on PATH"
    return found


@pytest.fixture(scope="session")
def inbox(local_stack: LocalStack) -> EventInbox:
    resources = local_stack.page()["resources"]
    return EventInbox(local_stack.aws("sqs"), resources["OrderEventsQueue"]["QueueUrl"])


@pytest.fixture(scope="session")
def dead_letters(local_stack: LocalStack) -> EventInbox:
    """What the commerce stream's OnFailure destination received."""
    resources = local_stack.page()["resources"]
    return EventInbox(local_stack.aws("sqs"), resources["CommerceStreamDLQ"]["QueueUrl"])


@pytest.fixture
def anonymous(local_stack: LocalStack) -> Client:
    return Client(local_stack, None)


@pytest.fixture
def customer(local_stack: LocalStack) -> Client:
    """A user of its own, registered through the API."""
    user = f"U-E2E-{uuid.uuid4().hex[:8]}"
    client = Client(local_stack, local_stack.token(user))
    registered = client.post("/users", json={"email": f"{user.lower()}@example.com", "name": "E2E Customer"})
    assert registered.status_code == 201, registered.text
    return client


@pytest.fixture
def admin(local_stack: LocalStack) -> Client:
    return Client(local_stack, local_stack.token("U-ADMIN", "admin"))


@pytest.fixture
def ops(local_stack: LocalStack) -> Client:
    return Client(local_stack, local_stack.token("U-OPS", "ops"))


@pytest.fixture
def product(admin: Client) -> dict[str, Any]:
    """A product of its own, created by the admin through the API (price 2500 EUR, stock 10)."""
    body = {
        "product_id": f"P-E2E-{uuid.uuid4().hex[:8].upper()}",
        "name": "E2E Mug",
        "category": "kitchen",
        "price": {"amount": 2500, "currency": "EUR"},
        "available": 10,
    }
    created = admin.post("/products", json=body)
    assert created.status_code == 201, created.text
    return dict(created.json())
