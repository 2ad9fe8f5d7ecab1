"""A function for the worker tests: the event says what to do, the answer shows what the worker saw.

Like a Powertools handler, it keeps the request in a module attribute while it runs, so two
requests served by one process at once would answer each other's ids.
"""

import os
import socket
import time
from pathlib import Path
from typing import Any

WAIT_LIMIT_S = 60  # a rendezvous that never completes fails the invocation instead of hanging it
CURRENT: dict[str, Any] = {}
# What init did, and which runtime hooks ran in this process (by pid: a restored worker inherits
# the snapshot's memory, and with it what the snapshot's own hooks recorded).
SNAPSHOTTED: list[int] = []
RESTORED: list[int] = []
CONNECTION: list[socket.socket] = []


def _init() -> None:
    """Init, as the environment asks: note the process in INIT_LOG, open a connection to
    CONNECT_AT_INIT (host:port), register runtime hooks (HOOKS=1), one of which fails (HOOKS=fail)."""
    if "INIT_LOG" in os.environ:
        with open(os.environ["INIT_LOG"], "a") as log:
            log.write(f"{os.getpid()}\n")
    if "CONNECT_AT_INIT" in os.environ:
        host, port = os.environ["CONNECT_AT_INIT"].split(":")
        CONNECTION.append(socket.create_connection((host, int(port))))
    if "HOOKS" in os.environ:
        from snapshot_restore_py import register_after_restore, register_before_snapshot

        register_before_snapshot(lambda: SNAPSHOTTED.append(os.getpid()))
        register_after_restore(lambda: RESTORED.append(os.getpid()))
        if os.environ["HOOKS"] == "fail":
            register_after_restore(_fail_restore)


def _fail_restore() -> None:
    raise RuntimeError("told to fail the restore")


def _connection_state() -> str:
    """Whether init's connection is still open ("open"), or its other end closed it ("closed")."""
    try:
        return "closed" if CONNECTION[0].recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"" else "open"
    except BlockingIOError:
        return "open"


_init()


def _wait_for(condition: Any) -> None:
    deadline = time.monotonic() + WAIT_LIMIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the rendezvous did not complete")
        time.sleep(0.01)


def _aws_error(endpoint: str) -> str | None:
    """What one GetItem through boto3's default session met: its error code or exception, None if none."""
    import boto3  # here: the other actions must not pay for it
    from botocore.config import Config

    config = Config(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=1)
    client = boto3.client("dynamodb", endpoint_url=endpoint, config=config)
    try:
        client.get_item(TableName="Items", Key={"PK": {"S": "a"}})
    except Exception as error:  # noqa: BLE001 - what it was is the answer
        return str(getattr(error, "response", {}).get("Error", {}).get("Code") or type(error).__name__)
    return None


def handler(event: dict[str, Any], context: Any) -> Any:
    CURRENT["request"] = event
    action = event["do"]
    if action == "environment":
        return dict(os.environ)
    if action == "raise":
        raise ValueError("told to raise")
    if action == "exit":
        os._exit(3)  # as a crash in native code or an out-of-memory kill ends a Lambda environment
    if action == "sleep":
        time.sleep(event["seconds"])
    if action == "stall":
        # Says it started, then holds its worker until the test releases it.
        Path(event["started"]).touch()
        _wait_for(Path(event["release"]).exists)
    if action == "runtime":
        return {
            "pid": os.getpid(),
            "initialization_type": os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE"),
            "snapshotted": SNAPSHOTTED,
            "restored": RESTORED,
        }
    if action == "connection":
        return {"pid": os.getpid(), "connection": _connection_state()}
    if action == "aws":
        return {"error": _aws_error(event["endpoint"])}
    if action == "aws many":
        # ``times`` GetItems, then the worker is held until every party made theirs.
        errors = [_aws_error(event["endpoint"]) for _ in range(event["times"])]
        _meet(event)
        return {"errors": errors, "pid": os.getpid()}
    if action == "meet":
        _meet(event)
    return {"id": CURRENT["request"].get("id"), "pid": os.getpid()}


def _meet(event: dict[str, Any]) -> None:
    """Arrives, then waits until every party arrived: they all run at the same time."""
    directory = Path(event["rendezvous"])
    (directory / event["id"]).touch()
    _wait_for(lambda: len(list(directory.iterdir())) >= event["parties"])
