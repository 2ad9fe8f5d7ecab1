"""Faults injected where the SDK would see them: DynamoDB leaving part of a BatchWriteItem unprocessed, SQS
refusing entries of a SendMessageBatch, as both do when throttled; and the local stack's injector
(``local.faults``) on one client, with the attempts it fails chosen by the test."""

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest.mock import patch

from local.faults import Injector
from shopfeed.platform import batch_writes, clients


class FirstAttempts(random.Random):
    """The injector's random source when a test names the attempts that fail: the first ``failing``
    draws say "fail", every later one "do not"."""

    def __init__(self, failing: int) -> None:
        super().__init__(0)
        self.failing = failing

    def random(self) -> float:
        if self.failing:
            self.failing -= 1
            return 0.0
        return 1.0

    def getrandbits(self, k: int) -> int:
        # Declared so that choice() draws its index from these bits: a subclass that overrides only
        # random() gets a choice() that loops on random() until it answers below 1.0.
        return super().getrandbits(k)


@contextmanager
def injected(client: Any, injector: Injector) -> Iterator[Injector]:
    """``injector``'s faults in ``client``'s calls, for the block."""
    injector.register(client.meta.events)
    try:
        yield injector
    finally:
        injector.unregister(client.meta.events)


def every_second(position: int) -> bool:
    return position % 2 == 1


def all_but_the_first(position: int) -> bool:
    return position > 0


@contextmanager
def unprocessed_writes(refuse: Callable[[int], bool] = every_second, calls: int | None = 1) -> Iterator[list[int]]:
    """DynamoDB throttling part of each BatchWriteItem, as it does under load: the requests at the
    positions ``refuse`` picks are left unwritten and handed back in UnprocessedItems, for the first
    ``calls`` calls (None: every call, and then the writer's backoffs between its attempts, full
    jitter up to 6.4 s, are not waited for: what is left unwritten is the point, not how long it took).
    The first request always goes through, as a throttled batch still makes progress. Yields the
    number of requests refused per call."""
    refused: list[int] = []
    held: list[Any] = []
    events = clients.dynamodb().meta.events

    def withhold(params: dict[str, Any], **_: Any) -> None:
        held.clear()
        if calls is not None and len(refused) >= calls:
            return
        for table, requests in params["RequestItems"].items():
            held.extend((table, r) for n, r in enumerate(requests) if n and refuse(n))
            params["RequestItems"][table] = [r for n, r in enumerate(requests) if not (n and refuse(n))]
        refused.append(len(held))

    def hand_back(parsed: dict[str, Any], **_: Any) -> None:
        unprocessed = parsed.setdefault("UnprocessedItems", {})
        for table, request in held:
            unprocessed.setdefault(table, []).append(request)

    delay = batch_writes.BASE_DELAY_S if calls is not None else 0.0
    with (
        _hooked(
            events,
            {
                "provide-client-params.dynamodb.BatchWriteItem": withhold,
                "after-call.dynamodb.BatchWriteItem": hand_back,
            },
        ),
        patch.object(batch_writes, "BASE_DELAY_S", delay),
    ):
        yield refused


@contextmanager
def refused_sends(refuse: Callable[[str], bool]) -> Iterator[list[str]]:
    """SQS refusing some entries of each SendMessageBatch (HTTP 200 with ``Failed`` entries, as it does
    when throttled): the bodies ``refuse`` picks are not sent. Yields the refused bodies."""
    refused: list[str] = []
    held: list[dict[str, Any]] = []
    events = clients.sqs().meta.events

    def withhold(params: dict[str, Any], **_: Any) -> None:
        held[:] = [entry for entry in params["Entries"] if refuse(entry["MessageBody"])]
        params["Entries"] = [entry for entry in params["Entries"] if not refuse(entry["MessageBody"])]
        refused.extend(entry["MessageBody"] for entry in held)

    def report(parsed: dict[str, Any], **_: Any) -> None:
        failed = [{"Id": e["Id"], "SenderFault": False, "Code": "InternalError", "Message": "refused"} for e in held]
        parsed["Failed"] = parsed.get("Failed", []) + failed

    with _hooked(
        events, {"provide-client-params.sqs.SendMessageBatch": withhold, "after-call.sqs.SendMessageBatch": report}
    ):
        yield refused


@contextmanager
def _hooked(events: Any, handlers: dict[str, Callable[..., None]]) -> Iterator[None]:
    """botocore event handlers registered for the block: a fault injected where the SDK would see it."""
    for name, handler in handlers.items():
        events.register(name, handler)
    try:
        yield
    finally:
        for name, handler in handlers.items():
            events.unregister(name, handler)
