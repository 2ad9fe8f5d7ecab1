"""Write capacity of exactly-once counters against a naive counter, on DynamoDB Local.

One post gets 100 likes through the feed API. Their stream records are delivered as the template's
event source mapping batches them (``FeedStreamFunction``'s BatchSize) and counted by the consumer's
post-counter handler (``count_on_posts``, ``platform.counters``): that is the exactly-once figure. The
naive figure is what the same 100 likes cost as 100 plain ``UpdateItem ADD likes_count 1`` on another
post (what a consumer that counts every delivery once per delivery writes). Every batch is then
delivered again, whole, as Lambda does after a failed invocation: the count must stay 100.
"""

import os
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from bench.markdown import table
from bench.meter import Meter, Metered
from bench.stack import Stack, moto_sqs
from local.harness.factories import register_user
from local.harness.fanout import FanoutLine
from local.harness.feed_factories import write_post
from local.harness.feed_seed import feed_table
from local.harness.feed_stream import CONSUMER, deliver_all, stream_poller
from shopfeed.feed import items, keys
from shopfeed.feed.consumers import feed_stream
from shopfeed.platform import clients, dynamo, streams
from shopfeed.platform.config import settings

LIKES = 100
AUTHOR = "U-BENCH-COUNTED"
BEFORE = (
    "Before (the same benchmark on 2026-11-27 at 074057b, the mechanism it replaced: one mark item per record "
    "in the counter's transaction, `BatchSize: 99`): 2 batches of [99, 1] like records, 2 round trips, "
    "**204 WCU (2.04× naive)**; the redelivery 2 round trips of refused transactions (DynamoDB reports no "
    "capacity for them, but bills them). After: one applied set per second the likes were made in, "
    "`BatchSize: 100` (any size writes each target once)."
)


@dataclass(frozen=True)
class CounterCost:
    batches: list[int]  # like records per delivered batch
    naive: Metered
    exactly_once: Metered
    redelivered: Metered
    counted: int
    counted_after_redelivery: int

    def markdown(self) -> str:
        def wcu(metered: Metered) -> str:
            units = metered.units(reads=False)
            return "–" if units is None else f"{units:g}"

        def rcu(metered: Metered) -> str:
            units = metered.units(reads=True)
            return "–" if units is None else f"{units:g}"

        naive = self.naive.units(reads=False) or 0.0
        once = self.exactly_once.units(reads=False) or 0.0
        rows = [
            [
                "naive: one `UpdateItem ADD` per like",
                str(len(self.naive.calls)),
                rcu(self.naive),
                wcu(self.naive),
                "1.00×",
            ],
            [
                f"exactly once: `count_on_posts` over {len(self.batches)} batch(es) of {self.batches} like records",
                str(len(self.exactly_once.calls)),
                rcu(self.exactly_once),
                wcu(self.exactly_once),
                f"{once / naive:.2f}×" if naive else "–",
            ],
            [
                "the same batches delivered again (a failed invocation)",
                str(len(self.redelivered.calls)),
                rcu(self.redelivered),
                wcu(self.redelivered),
                "–",
            ],
        ]
        return "\n".join(
            [
                table(["100 likes of one post", "round trips", "RCU", "WCU", "÷ naive"], rows),
                "",
                f"`likes_count` after the first delivery: {self.counted}; after the redelivery: "
                f"{self.counted_after_redelivery} (exact: {LIKES}). WCU as `bench.meter` counts them (a "
                "transaction's table share computed from the items it wrote, 2 WCU per item per started KB). "
                "The RCU are the strongly consistent read of the applied sets: DynamoDB Local reports 0 for "
                "sets not written yet, where DynamoDB bills at least 1 per set read.",
            ]
        )


def measure(stack: Stack) -> CounterCost:
    with moto_sqs():
        return _measure(stack)


def _measure(stack: Stack) -> CounterCost:
    line = FanoutLine.create()
    os.environ["FANOUT_QUEUE_URL"] = line.url
    settings.cache_clear()
    name = feed_table()
    events: list[dict[str, Any]] = []

    def keep(event: dict[str, Any], _: object) -> dict[str, Any]:
        """The mapping's batches, kept instead of handled, so the counter alone is metered below."""
        events.append(event)
        return {"batchItemFailures": []}

    poller = stream_poller(name, CONSUMER, keep)
    author = stack.feed_api.as_user(AUTHOR)
    register_user(stack.api.as_user(AUTHOR), handle="bench_counted")
    counted, naive_target = write_post(author, "Counted.")["post_id"], write_post(author, "Counted naively.")["post_id"]
    deliver_all(poller)
    events.clear()
    for n in range(LIKES):
        answer = stack.feed_api.as_user(f"U-BENCH-LIKER-{n:03d}").put(f"/posts/{counted}/likes/me")
        assert answer.status == 201, answer.text
    deliver_all(poller)
    batches = [
        [
            change
            for change in map(streams.parse, map(DynamoDBRecord, event["Records"]))
            if change.entity_type == items.LIKE
        ]
        for event in events
    ]
    batches = [batch for batch in batches if batch]
    assert sum(map(len, batches)) == LIKES, [len(batch) for batch in batches]
    table = dynamo.Table(clients.dynamodb(), name)
    with Meter() as meter:
        with meter.measuring() as naive:
            for _ in range(LIKES):
                table.update(keys.post(naive_target), dynamo.Update(add={items.LIKES_COUNT: 1}))
        with meter.measuring() as once:
            for batch in batches:
                assert not feed_stream.count_on_posts(batch)
        after_first = _likes(table, counted)
        with meter.measuring() as again:
            for batch in batches:
                assert not feed_stream.count_on_posts(batch)
    return CounterCost([len(batch) for batch in batches], naive, once, again, after_first, _likes(table, counted))


def _likes(table: dynamo.Table, post_id: str) -> int:
    return int((table.get(keys.post(post_id)) or {}).get(items.LIKES_COUNT, 0))
