"""One execution environment of a function: the process the local stack starts per worker.

Run as ``python -P local/worker.py '<json config>'`` with the function's environment, it does what
the Lambda runtime does in a container: puts the code and layer directories on ``sys.path``
(/var/task and /opt/python in AWS), imports the handler once (the init phase), then serves one
invocation at a time, read as one JSON line on stdin, answered as one JSON line on the original
stdout. The handler's own prints and logs go to stderr, which the stack shares, as CloudWatch would
get them. Only the standard library is imported here, so nothing of the stack leaks into the
function's process; with ``--faults`` the stack's fault injector (``local/faults.py``) is loaded by
its path before the handler, and each answer carries the calls and faults counted since the last.

With SnapStart (``"snap_start"`` in the config) the process is the function's snapshot instead: it runs
init once, as Lambda does when it publishes a version, and then serves nothing itself. Each worker
the stack asks for is restored from it: a fork, handed its two pipes over the snapshot's stdin (a
Unix socket), that runs the after-restore hooks registered with ``snapshot_restore_py`` (Lambda's
runtime hooks) and then serves invocations exactly as an on-demand worker does. The stack reaps
nothing: the snapshot ignores SIGCHLD, so the kernel reaps its restored workers.
"""

import importlib
import importlib.util
import json
import os
import signal
import socket
import stat
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
        if config.get("snap_start"):
            _run_hooks("get_before_snapshot")
            drop_connections()
    except Exception as error:  # noqa: BLE001 - Runtime.ImportModuleError in Lambda: reported, then exit
        _send(channel, {"init_error": _error(error), **_counts(faults)})
        return
    _send(channel, {"ready": True, **_counts(faults)})
    if config.get("snap_start"):
        restore_on_request(config, handler, requests, channel, faults)
    else:
        _invocations(config, handler, requests, channel, faults)


def restore_on_request(
    config: dict[str, Any], handler: Callable[[Any, Any], Any], requests: BinaryIO, channel: BinaryIO, faults: Any
) -> None:
    """The snapshot's loop: for each restore the stack asks for (a JSON message with the worker's number
    and its two pipes' ends), fork a worker, answer its pid; until the stack closes the socket."""
    control = socket.socket(fileno=os.dup(requests.fileno()))
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the restored workers
    while True:
        message, fds, _, _ = socket.recv_fds(control, 1 << 16, 2)
        if not message:
            return
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for own in (control, requests, channel):
                    own.close()
                _restored(config, json.loads(message), handler, fds, faults)
            except BaseException:  # noqa: BLE001 - the fork must end here whatever happened: said on stderr
                traceback.print_exc()
            finally:
                os._exit(1)  # only reached when the restore broke before it could answer: never the snapshot's loop
        for fd in fds:
            os.close(fd)
        control.sendall(_line({"pid": pid}))


def _run_hooks(registry: str) -> None:
    """The runtime hooks the function registered with ``snapshot_restore_py`` (if its code loaded it),
    in the order registered, as Lambda's runtime runs them."""
    hooks = sys.modules.get("snapshot_restore_py")
    for hook, args, kwargs in getattr(hooks, registry)() if hooks is not None else ():
        hook(*args, **kwargs)


def drop_connections() -> None:
    """End every network connection init left open, as a snapshot does: Lambda restores none of them.
    Each one's descriptor is made to name a socket whose other end is closed, so the client that holds
    it finds it dropped and connects again (urllib3 checks before reusing one), and no two restored
    workers ever share a live connection, which forked copies of it would."""
    for name in os.listdir("/dev/fd"):
        fd = int(name)
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            with socket.socket(fileno=os.dup(fd)) as probe:
                if probe.family not in (socket.AF_INET, socket.AF_INET6):
                    continue  # the stack's own channel
        except OSError:  # the listing's own descriptor, closed by now
            continue
        closed, other_end = socket.socketpair()
        other_end.close()
        os.dup2(closed.fileno(), fd)
        closed.close()


def _restored(
    config: dict[str, Any], restore: dict[str, Any], handler: Callable[[Any, Any], Any], fds: list[int], faults: Any
) -> None:
    """A restored worker: the after-restore hooks, then invocations on its own pipes; never returns."""
    requests, channel = os.fdopen(fds[0], "rb"), os.fdopen(fds[1], "wb")
    try:
        if faults is not None:
            faults.reseed(config["faults"]["seed"], config["name"], restore["worker"])  # the snapshot's seed
        _run_hooks("get_after_restore")
    except Exception as error:  # noqa: BLE001 - a failed hook fails the restore, as in Lambda
        _send(channel, {"init_error": _error(error), **_counts(faults)})
    else:
        _send(channel, {"ready": True, **_counts(faults)})
        _invocations(config, handler, requests, channel, faults)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # the snapshot's atexit handlers and buffers are the snapshot's, not this worker's


def _invocations(
    config: dict[str, Any], handler: Callable[[Any, Any], Any], requests: BinaryIO, channel: BinaryIO, faults: Any
) -> None:
    """One invocation at a time, each a JSON line in and a JSON line out, until the stack closes the pipe."""
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
