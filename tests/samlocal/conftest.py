"""samlocal tier: the built functions in Lambda containers under `sam local`, against DynamoDB Local.

It runs whenever a container runtime answers at DOCKER_HOST (Docker, or the podman that
local/samlocal/setup.sh prepares; its .tools/samlocal.env counts when the shell has not sourced it)
and skips, saying why, only when none answers. Anything else missing fails: a skip would hide it.

One DynamoDB Local and one ``sam build`` per session; every test gets fresh tables under a unique
suffix, named to the functions through its own ``--env-vars`` file. Givens are seeded through the
in-process handler into the same tables, so only the step under test pays for a container.
"""

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local import dynamodb_local
from local.cfn import ROOT
from local.harness.client import ApiClient
from local.samlocal import env
from local.samlocal.sam import SamLocal, settings
from tests.conftest import reset_caches
from tests.samlocal.helpers import LocalApi, Tables, new_tables
from tests.support.engines import running_dynamodb_local


@pytest.fixture(scope="session")
def runtime() -> SamLocal:
    sam = SamLocal(settings())
    if not sam.docker.answers():
        pytest.skip(f"no container runtime answers at DOCKER_HOST={sam.docker.host}; run local/samlocal/setup.sh")
    return sam


@pytest.fixture(scope="session")
def engine(runtime: SamLocal) -> Iterator[dynamodb_local.DynamoDBLocal]:
    # DynamoDB Local listens on every interface, so containers reach it through the host's name.
    with running_dynamodb_local() as started:
        yield started


@pytest.fixture(scope="session")
def sam(runtime: SamLocal, engine: dynamodb_local.DynamoDBLocal) -> Iterator[SamLocal]:
    """The derived template, built once; afterwards, what this session left in the container runtime."""
    docker = runtime.docker
    images = docker.lambda_images()
    runtime.build()
    yield runtime
    # SAM removes its containers itself; these are ones a failed or killed run left behind, told from
    # anybody else's by the endpoint of this session's DynamoDB Local.
    ours = f"AWS_ENDPOINT_URL_DYNAMODB={env.reachable_from_containers(engine.endpoint, runtime.host)}"
    for container in docker.lambda_containers():
        if ours in docker.container_environment(container):
            docker.remove_container(container)
    # The images SAM built here (one per set of layers, local.samlocal.layers) hold a layer build that
    # the next change replaces: removed, with the untagged ones a rebuild left. One still in use
    # (someone's start-api) is refused by the runtime and stays.
    for image in docker.lambda_images() - images:
        with contextlib.suppress(RuntimeError):
            docker.remove_image(image)
    docker.prune_dangling_images()


def point_in_process_handler_at(
    tables: Tables, engine: dynamodb_local.DynamoDBLocal, monkeypatch: pytest.MonkeyPatch
) -> ApiClient:
    """The in-process commerce API writing to ``tables`` (for givens)."""
    from functions.commerce_api.app import lambda_handler

    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", engine.endpoint)
    monkeypatch.setenv("COMMERCE_TABLE_NAME", tables.names["CommerceTable"])
    reset_caches()
    return ApiClient(lambda_handler)


@pytest.fixture
def tables(sam: SamLocal, engine: dynamodb_local.DynamoDBLocal, tmp_path: Path) -> Tables:
    return new_tables(sam, engine, tmp_path)


@pytest.fixture
def commerce_api(
    tables: Tables, engine: dynamodb_local.DynamoDBLocal, environment: None, monkeypatch: pytest.MonkeyPatch
) -> ApiClient:
    return point_in_process_handler_at(tables, engine, monkeypatch)


# -- sam local start-api ----------------------------------------------------------------------------


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.2)
    log.seek(0)
    pytest.fail(f"sam local start-api did not serve port {port}:\n{log.read().decode()[-4000:]}")


@pytest.fixture(scope="module")
def local_api(
    sam: SamLocal, engine: dynamodb_local.DynamoDBLocal, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalApi]:
    tables = new_tables(sam, engine, tmp_path_factory.mktemp("start-api"))
    port = dynamodb_local.free_port()
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            sam.start_api_command(port, tables.env_vars),
            cwd=ROOT,
            env=sam.environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopping it stops its workers too
        )
        try:
            _wait_for_port(port, process, log, timeout=60)
            yield LocalApi(f"http://127.0.0.1:{port}", tables)
        finally:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    # SAM stops and removes its warm containers on SIGTERM. (Not SIGINT: a shell that starts a job in
    # the background without job control makes it ignore SIGINT, and the children inherit that.)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture
def api_commerce(
    local_api: LocalApi,
    engine: dynamodb_local.DynamoDBLocal,
    environment: None,
    monkeypatch: pytest.MonkeyPatch,
) -> ApiClient:
    """The in-process commerce API writing to the tables start-api serves."""
    return point_in_process_handler_at(local_api.tables, engine, monkeypatch)
