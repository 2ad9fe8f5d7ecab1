"""One execution environment of a function: the process the local stack starts per worker.

Run as ``python -P local/worker.py '<json config>'`` with the function's environment, it does what
the Lambda runtime does in a container: puts the code and layer directories on ``sys.path``
(/var/task and /opt/python in AWS), imports the handler once (the init phase), then serves one
invocation at a time, read as one JSON line on stdin, answered as one JSON line on the original
stdout. The handler's own prints and logs go to stderr, which the stack shares, as CloudWatch would
get them. Only the standard library is imported here, so nothing of the stack leaks into the
function's process; with ``--faults`` the stack's fault injector (``local/faults.py``) is loaded by
its path before the handler, and each answer carries the calls and faults counted since the last.
"""

import importlib
import importlib.util
import json
import os
import sys
import time
import traceback
import uuid
from collections.abc import Callable
from typing import Any, BinaryIO


class LambdaContext:
    """The ``context`` argument: the fields and method the Python runtime provides."""

    def __init__(self, name: str, arn: str, memory_mb: int, deadline: float, request_id: str | None = None) -> None:
        self.function_name = name
        self.function_version = "$LATEST"
        self.invoked_function_arn = arn
        self.memory_limit_in_mb = memory_mb
        self.aws_request_id = request_id or str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{name}"
        self.log_stream_name = "local"
        self.identity = None
        self.client_context = None
        self._deadline = deadline

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def load_handler(code_dir: str, handler: str, layers: list[str]) -> Callable[[Any, Any], Any]:
    """Import ``handler`` (``module.attribute``, as in the template) as the runtime does."""
    _add_paths(code_dir, layers)
    module_name, _, attribute = handler.rpartition(".")
    return getattr(importlib.import_module(module_name), attribute)  # type: ignore[no-any-return]


def _add_paths(code_dir: str, layers: list[str]) -> None:
    for path in reversed([code_dir, *layers]):
        if path not in sys.path:
            sys.path.insert(0, path)


def install_faults(settings: dict[str, Any]) -> Any:
    """The fault injector (``local/faults.py``, loaded by its path: ``local`` is not importable here),
    installed on boto3's default session before the handler makes any client."""
    spec = importlib.util.spec_from_file_location("local_faults", settings["module"])
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.install(**{name: value for name, value in settings.items() if name != "module"})


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _send(channel: BinaryIO, message: dict[str, Any]) -> None:
    channel.write(_line(message))
    channel.flush()


def _error(error: BaseException) -> dict[str, Any]:
    return {
        "error_type": type(error).__name__,
        "error_message": str(error),
        "trace": "".join(traceback.format_exception(error)).rstrip(),
    }


def _counts(faults: Any) -> dict[str, Any]:
    """The calls and faults counted since the last message (none without fault injection)."""
    return {"faults": faults.tally.take()} if faults is not None else {}


def serve(config: dict[str, Any]) -> None:
    # The protocol keeps the original stdin and stdout; the handler gets /dev/null and stderr instead.
    requests = os.fdopen(os.dup(0), "rb")
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    faults = None
    try:
        _add_paths(config["code_dir"], config["layers"])
        if config.get("faults"):
            faults = install_faults(config["faults"])
        handler = load_handler(config["code_dir"], config["handler"], config["layers"])
    except Exception as error:  # noqa: BLE001 - Runtime.ImportModuleError in Lambda: reported, then exit
        _send(channel, {"init_error": _error(error), **_counts(faults)})
        return
    _send(channel, {"ready": True, **_counts(faults)})
    for line in requests:
        request = json.loads(line)
        started = time.monotonic()
        context = LambdaContext(
            config["name"], config["arn"], config["memory_mb"], started + request["timeout_s"], request["request_id"]
        )
        try:
            outcome = {"payload": handler(request["event"], context)}
        except Exception as error:  # noqa: BLE001 - any handler failure is a function error, as in Lambda
            outcome = _error(error)
        counts = _counts(faults)
        try:
            answer = _line({**outcome, **counts})
        except (TypeError, ValueError) as error:  # an unserialisable result is a function error, as in AWS
            answer = _line({**_error(error), **counts})
        channel.write(answer)
        channel.flush()


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]))
