"""Count the DynamoDB round trips a piece of code makes, with a botocore event hook."""

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from shopfeed.platform import clients


class CallLog:
    def __init__(self) -> None:
        self.operations: list[str] = []

    def __len__(self) -> int:
        return len(self.operations)

    def counts(self) -> Counter[str]:
        return Counter(self.operations)

    def _record(self, model: Any, **_: Any) -> None:
        self.operations.append(model.name)


@contextmanager
def dynamodb_calls() -> Iterator[CallLog]:
    """Every DynamoDB API call made through the shared client while the block runs.

    Counted once per API call: an SDK retry of the same call is not a new round trip of the code.
    """
    log = CallLog()
    events = clients.dynamodb().meta.events
    events.register("before-call.dynamodb", log._record)
    try:
        yield log
    finally:
        events.unregister("before-call.dynamodb", log._record)
