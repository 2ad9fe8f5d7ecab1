"""The feed stream's record handlers: one per effect of a FeedTable write (``functions/feed_stream``
maps each record type to its effects).

Each stream handler gets every record of the batch routed to it (of one type or several) and answers
the failed ones. Each is idempotent, because Lambda redelivers records (a whole batch after an error,
everything after the first failed record after a partial batch response): counters through
``platform.counters`` (one write per target per batch, each record counted once), notifications put
only if absent, fanout tasks and queued search writes that write the same keys and versions again.
Ports come from ``feed.bootstrap``, built once per container.
"""

from collections.abc import Sequence

from shopfeed.feed import bootstrap, keys
from shopfeed.feed.engagement import cleanup, mentions, notifications
from shopfeed.feed.engagement.counters import counted_on_leaderboard, counted_on_posts, post_gone
from shopfeed.feed.follows.counters import counted_on_profiles
from shopfeed.feed.home import backfill, fanout
from shopfeed.feed.posts.search import POST_PROJECTION
from shopfeed.platform import counters, queues, streams
from shopfeed.platform.clock import utc_now
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.search import sync as search_sync


def _count(
    changes: Sequence[streams.ItemChange], rule: counters.CountRule, *, must_exist: bool = True
) -> streams.Failures:
    table = bootstrap.table()
    uncounted = counters.count(table, keys.applied_records, changes, rule, utc_now(), must_exist=must_exist)
    for sequence_number, error in uncounted.items():
        logger.warning("record not counted", sequence_number=sequence_number, error=str(error))
    metrics.add_metric(name="FeedCounterFailed", unit="Count", value=len(uncounted))
    return uncounted


def fan_out(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Posts written or removed → the first fanout task of each on the fanout queue (``home.fanout``)."""
    return queues.enqueue(
        changes, fanout.fanout_task, bootstrap.fanout_queue(), metric="FanoutTaskQueued", unqueued="post not fanned out"
    )


def settle_follow(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Follows written or removed → a task on the fanout queue that brings the followee's recent posts
    into the follower's feed, or takes their entries out of it (``home.backfill``)."""
    return queues.enqueue(
        changes,
        backfill.follow_task,
        bootstrap.fanout_queue(),
        metric="FollowFeedTaskQueued",
        unqueued="follow not settled in the feed",
    )


def count_on_profiles(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Posts and follows → their profiles' counters. Routed for both types, so it sees both at once: a
    profile a post and a follow touch in one batch takes one write."""
    return _count(changes, counted_on_profiles)


def count_on_posts(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Likes and comments → their post's counters; a count whose post is gone is dropped, not retried."""
    failures = _count(changes, counted_on_posts)
    for sequence_number in [key for key, error in failures.items() if post_gone(error)]:
        logger.info("count dropped: its post is gone", sequence_number=sequence_number)
        del failures[sequence_number]
    return failures


def count_on_leaderboard(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Follows → the followee's entry of the month (created on its first count)."""
    return _count(changes, counted_on_leaderboard, must_exist=False)


def notify(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """New likes, comments and follows → their notifications, then the likes counted on the collapsed
    ones (which the put made, so the count finds them)."""
    failures = notifications.put_notifications(bootstrap.table(), changes)
    return {**_count(changes, notifications.counted_on_notifications), **failures}


def notify_mentioned(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """New posts and comments → a notification for each existing user their text @mentions (at most
    ``mentions.MAX_MENTIONS``), each once however often the record comes."""
    return mentions.put_mention_notifications(bootstrap.table(), changes)


def remove_engagement(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Posts removed → their likes and comments deleted."""
    removed = cleanup.remove_engagement(bootstrap.table(), changes)
    metrics.add_metric(name="EngagementRemoved", unit="Count", value=removed)
    return {}


def sync_post_search(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Posts → their versioned writes, queued for the search sync worker, so that no redelivery or
    reordering regresses a document or undoes a delete and no engine outage holds the batch
    (``platform.search.sync``). A MODIFY of a post is a counter changing (same version): it queues
    nothing."""
    return search_sync.queue_writes(changes, POST_PROJECTION, bootstrap.search_sync_queue())
