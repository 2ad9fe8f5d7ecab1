"""FeedTable stream record handlers: fanout tasks of posts, and the follower/following/post counters.

``functions/feed_stream/app.py`` routes records here by ``entity_type``. Every handler is idempotent:
Lambda redelivers records (a whole batch after an error, everything after the first failed record
after a partial batch response), and a redelivered record must change nothing more.

- A new post delivered by fanout puts one ``FanoutTask`` on the fanout queue; the worker pages the
  followers. A deleted one puts a REMOVE task. A redelivered record queues the task again: the
  worker writes the same keys (see feed.fanout). Pull posts (a celebrity's) are not fanned out:
  followers' home feeds merge them at read time. The post records which one it is (``delivery``).
- Counters: a post counts on its author's ``posts_count``, a follow on the followee's
  ``followers_count`` and the follower's ``following_count``; a REMOVE takes it back. Posts and
  follows are counted together (one handler for both types), so a profile both kinds touch in one
  batch still takes one write (see platform.counters for how that stays exact).
"""

from collections.abc import Sequence

from shopfeed.feed import fanout, items, keys
from shopfeed.feed.fanout import FanoutAction, FanoutTask
from shopfeed.feed.models import Delivery
from shopfeed.feed.settings import FanoutSettings
from shopfeed.platform import clients, counters, dynamo, queues, streams
from shopfeed.platform.clock import utc_now
from shopfeed.platform.config import settings
from shopfeed.platform.counters import Increment
from shopfeed.platform.observability import logger, metrics

_ACTIONS = {streams.ChangeKind.INSERT: FanoutAction.ADD, streams.ChangeKind.REMOVE: FanoutAction.REMOVE}


def fanout_task(change: streams.ItemChange) -> FanoutTask | None:
    """The fanout task of a post written or removed; None for a MODIFY (posts are immutable: it is a
    counter changing) and for a pulled post (followers merge it at read time)."""
    action = _ACTIONS.get(change.kind)
    if action is None:
        return None
    post = items.post_from(change.image or {})
    return FanoutTask(action=action, entry=items.entry_of(post)) if post.delivery is Delivery.FANOUT else None


def queue_fanout(changes: Sequence[streams.ItemChange], queue: fanout.TaskQueue) -> streams.Failures:
    """Put the fanout task of each post change on the queue; a refused task fails only its record."""
    return queues.enqueue(changes, fanout_task, queue, metric="FanoutTaskQueued", unqueued="post not fanned out")


_SIGNS = {streams.ChangeKind.INSERT: 1, streams.ChangeKind.REMOVE: -1}


def counted(change: streams.ItemChange) -> list[Increment]:
    """What a post or a follow counts on profiles: +1 when written, -1 when removed."""
    sign = _SIGNS.get(change.kind)
    if sign is None:
        return []  # a MODIFY (a post's own counters changing) counts nothing
    if change.entity_type == items.POST:
        post = items.post_from(change.image or {})
        return [Increment(keys.profile(post.author_id), items.POSTS_COUNT, sign)]
    if change.entity_type == items.FOLLOW:
        follow = items.follow_from(change.image or {})
        return [
            Increment(keys.profile(follow.followee_id), items.FOLLOWERS_COUNT, sign),
            Increment(keys.profile(follow.follower_id), items.FOLLOWING_COUNT, sign),
        ]
    return []


def _mark(target: str, change: streams.ItemChange) -> keys.Key:
    return keys.applied_record(target, change.sequence_number)


def count_and_fan_out(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """The handler of posts and follows: fanout tasks for posts, then the counters of both."""
    config = settings(FanoutSettings)
    posts = [change for change in changes if change.entity_type == items.POST]
    failures = queue_fanout(posts, fanout.task_queue(config)) if posts else {}
    table = dynamo.Table(clients.dynamodb(), config.feed_table_name)
    uncounted = counters.count(table, _mark, changes, counted, utc_now())
    for sequence_number, error in uncounted.items():
        logger.warning("record not counted", sequence_number=sequence_number, error=str(error))
    metrics.add_metric(name="FeedCounterFailed", unit="Count", value=len(uncounted))
    return {**uncounted, **failures}
