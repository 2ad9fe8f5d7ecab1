"""The template's functions, run in this process the way the Lambda runtime calls them.

Each handler module is imported by file path under its own module name (every function's entry
point is an ``app.py``), with the layer's directory on ``sys.path`` as Lambda mounts it under /opt.
Events and results go through JSON, as they do between Lambda and its callers, so a handler cannot
rely on sharing objects with the caller, and an unserialisable result fails as it would in AWS.
"""

import importlib.util
import json
import logging
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("local.lambda")

Handler = Callable[[dict[str, Any], Any], Any]

# Every handler shares this one process, and module-level singletons of the libraries they use are
# per process (Powertools keeps its metric set in class attributes, and the logger's appended keys on
# one instance). One invocation at a time keeps them apart, as one execution environment would.
_ONE_AT_A_TIME = threading.Lock()


class LambdaContext:
    """The ``context`` argument: the fields and method the Python runtime provides."""

    def __init__(self, function: "LocalFunction", deadline: float) -> None:
        self.function_name = function.name
        self.function_version = "$LATEST"
        self.invoked_function_arn = function.arn
        self.memory_limit_in_mb = function.memory_mb
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function.name}"
        self.log_stream_name = "local"
        self.identity = None
        self.client_context = None
        self._deadline = deadline

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


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


class LocalFunction:
    """One function of the template, callable with an event."""

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
        self.arn = f"arn:aws:lambda:{region}:{account}:function:{name}"

    @classmethod
    def load(cls, name: str, code_dir: Path, handler: str, **options: Any) -> "LocalFunction":
        """Import ``handler`` (``module.attribute``, as in the template) from ``code_dir``."""
        module_path, _, attribute = handler.rpartition(".")
        source = code_dir / (module_path.replace(".", "/") + ".py")
        if not source.is_file():
            raise FileNotFoundError(f"{name}: {source} does not exist")
        module_name = f"local_function_{name}"
        spec = importlib.util.spec_from_file_location(module_name, source)
        if spec is None or spec.loader is None:
            raise ImportError(f"{name}: cannot import {source}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
        return cls(name, getattr(module, attribute), **options)

    def invoke(self, event: Mapping[str, Any]) -> Invocation:
        """Run the handler once with ``event``; an exception becomes an ``Unhandled`` function error."""
        request = json.loads(json.dumps(event))
        with _ONE_AT_A_TIME:
            started = time.monotonic()
            context = LambdaContext(self, started + self.timeout_s)
            try:
                result = json.loads(json.dumps(self.handler(request, context)))
            except Exception as error:  # noqa: BLE001 - any handler failure is a function error, as in Lambda
                duration = (time.monotonic() - started) * 1000
                log.error("%s failed: %s", self.name, "".join(traceback.format_exception(error)).rstrip())
                return Invocation(error_type=type(error).__name__, error_message=str(error), duration_ms=duration)
        duration = (time.monotonic() - started) * 1000
        if duration > self.timeout_s * 1000:
            # Reported, not enforced: stopping a thread mid-handler is not possible, and a debugger
            # session would trip it. Lambda would have stopped this invocation with a timeout error.
            log.warning("%s ran %.0f ms, longer than its Timeout of %s s", self.name, duration, self.timeout_s)
        return Invocation(payload=result, duration_ms=duration)
