"""The fanout queue's message handler (functions/fanout_worker): one page of a post's followers, or one
follow or unfollow settled in the follower's feed."""

from dataclasses import asdict
from functools import cache

from pydantic import TypeAdapter

from shopfeed.feed import bootstrap
from shopfeed.feed.home import backfill, fanout
from shopfeed.platform.clock import utc_now
from shopfeed.platform.observability import logger, metrics


@cache
def _fanout_tasks() -> TypeAdapter[fanout.FanoutTask | backfill.FollowTask]:
    # Built on the first message, not at import (cold start). Both models forbid extra fields, so a
    # body validates as exactly one of them.
    return TypeAdapter(fanout.FanoutTask | backfill.FollowTask)


def fan_out_page(body: str) -> fanout.PageReport | backfill.FollowReport:
    """The worker's record handler: one queue message, one page of a post's followers or one follow
    settled. A malformed body raises (pydantic's ValidationError): the message fails on its own and,
    after the queue's maxReceiveCount, reaches the dead-letter queue. So does a page DynamoDB keeps
    refusing (UnprocessedWrites), or edges that kept changing under a task (EdgesKeptChanging)."""
    task = _fanout_tasks().validate_json(body)
    if isinstance(task, backfill.FollowTask):
        return _settle_follow(task)
    report = fanout.run_page(task, bootstrap.fanout_store(), bootstrap.fanout_queue(), bootstrap.fanout_page_size())
    logger.info(
        "fanout page done",
        action=task.action,
        post_id=task.entry.post_id,
        written=report.written,
        removed=report.removed,
        continued=report.continued,
        post_gone=report.post_gone,
    )
    metrics.add_metric(name="FanoutEntriesWritten", unit="Count", value=report.written)
    metrics.add_metric(name="FanoutEntriesRemoved", unit="Count", value=report.removed)
    return report


def _settle_follow(task: backfill.FollowTask) -> backfill.FollowReport:
    report = backfill.settle_follow(task, bootstrap.fanout_store(), bootstrap.follow_backfill_posts(), utc_now())
    logger.info("follow settled in the feed", **task.model_dump(), **asdict(report))
    metrics.add_metric(name="BackfillEntriesWritten", unit="Count", value=report.written)
    metrics.add_metric(name="CleanupEntriesRemoved", unit="Count", value=report.removed)
    return report
