"""Fanout throughput on DynamoDB Local: the worker against a plain BatchWriteItem loop (goal ≥ 0.8×).

An author with 10,000 followers posts. The worker's figure runs the whole chain: each page is a
message on the fanout queue (SQS in a moto server), delivered to the worker's handler by the local
stack's poller (receive, invoke, delete), one Query for the page's followers, the post checked before
and after the page, its entries written with BatchWriteItem, the next page's task sent. The baseline
writes the same number of entry items (another post, the same followers) with nothing but a loop of
BatchWriteItem calls of 25. Rounds alternate between the two, so a burst of load from other processes
on this machine slows both sides rather than one.
"""

import logging
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from bench.markdown import table
from bench.stack import Stack, moto_sqs
from local.harness import feed_builders
from local.harness.fanout import FanoutLine, follower_ids, put_post, seed_followers
from shopfeed.feed import items
from shopfeed.feed.home.fanout import PAGE_SIZE, FanoutAction, FanoutTask
from shopfeed.platform import batch_writes, clients, dynamo
from shopfeed.platform.config import settings
from shopfeed.platform.observability import logger

AUDIENCE = 10_000
ROUNDS = 3
AUTHOR = "U-BENCH-AUTHOR"


@dataclass
class FanoutThroughput:
    worker: list[float] = field(default_factory=list)  # seconds per round
    plain: list[float] = field(default_factory=list)
    pages: int = 0

    @property
    def ratio(self) -> float:
        """Worker throughput over plain-loop throughput, median over rounds (each round pairs the two)."""
        return statistics.median(p / w for w, p in zip(self.worker, self.plain, strict=True))

    def markdown(self) -> str:
        def row(label: str, samples: list[float]) -> list[object]:
            best = min(samples)
            return [label, AUDIENCE, f"{statistics.median(samples):.2f}", f"{best:.2f}", f"{AUDIENCE / best:.0f}"]

        return "\n".join(
            [
                table(
                    ["writer", "entries", "median s", "best s", "entries/s (best)"],
                    [
                        row(f"fanout worker ({self.pages} pages of {PAGE_SIZE})", self.worker),
                        row("plain BatchWriteItem loop", self.plain),
                    ],
                    "lrrrr",
                ),
                "",
                f"Worker throughput / plain loop: **{self.ratio:.2f}×** (median of {len(self.worker)} paired rounds; "
                "goal ≥ 0.8×). The worker's extra work per page of 1,000: one Query, two GetItem, one "
                "SendMessage and the queue's receive and delete, against 40 BatchWriteItem calls.",
            ]
        )


def _timed(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _forget_clients() -> None:
    # The settings changed: clients and settings are cached per process on first use.
    clients.reset()
    settings.cache_clear()


def measure(stack: Stack) -> FanoutThroughput:
    # The worker logs one line per page: the report is on stdout.
    logger.setLevel(logging.WARNING)
    with moto_sqs():
        table_name = stack.tables["FeedTable"]
        line = FanoutLine.create()
        os.environ["FANOUT_QUEUE_URL"] = line.url
        _forget_clients()
        followers = follower_ids(AUDIENCE)
        seed_followers(table_name, AUTHOR, followers, indexed=False)
        result = FanoutThroughput()
        for _ in range(ROUNDS):
            post, baseline = feed_builders.post(AUTHOR), feed_builders.post(AUTHOR)
            put_post(table_name, post)
            requests: list[Any] = [
                {"PutRequest": {"Item": dynamo.serialize(items.feed_entry_item(f, items.entry_of(baseline)))}}
                for f in followers
            ]
            result.plain.append(_timed(partial(batch_writes.write_all, clients.dynamodb(), table_name, requests)))
            line.send([FanoutTask(action=FanoutAction.ADD, entry=items.entry_of(post)).model_dump_json()])
            line.delivered.clear()
            result.worker.append(_timed(line.drain))
            result.pages = len(line.delivered)
        return result
