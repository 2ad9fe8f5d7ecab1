"""Count the DynamoDB (and S3, SQS) round trips a piece of code makes, with a botocore event hook."""

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from shopfeed.platform import clients


class CallLog:
    def __init__(self) -> None:
        self.operations: list[str] = []
        self.requests: list[tuple[str, dict[str, Any]]] = []  # (operation, parameters) as the code sent them

    def __len__(self) -> int:
        return len(self.operations)

    def counts(self) -> Counter[str]:
        return Counter(self.operations)

    def _record(self, model: Any, **_: Any) -> None:
        self.operations.append(model.name)

    def _keep(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        self.requests.append((model.name, dict(params)))


@contextmanager
def dynamodb_calls() -> Iterator[CallLog]:
    """Every DynamoDB API call made through the shared client while the block runs.

    Counted once per API call: an SDK retry of the same call is not a new round trip of the code.
    """
    with _calls(clients.dynamodb(), "dynamodb") as log:
        yield log


@contextmanager
def s3_calls() -> Iterator[CallLog]:
    """Every S3 API call made through the shared client while the block runs (counted as above)."""
    with _calls(clients.s3(), "s3") as log:
        yield log


@contextmanager
def sqs_calls() -> Iterator[CallLog]:
    """Every SQS API call made through the shared client while the block runs (counted as above)."""
    with _calls(clients.sqs(), "sqs") as log:
        yield log


@contextmanager
def _calls(client: Any, service: str) -> Iterator[CallLog]:
    log = CallLog()
    events = client.meta.events
    events.register(f"before-call.{service}", log._record)
    events.register(f"before-parameter-build.{service}", log._keep)
    try:
        yield log
    finally:
        events.unregister(f"before-call.{service}", log._record)
        events.unregister(f"before-parameter-build.{service}", log._keep)
