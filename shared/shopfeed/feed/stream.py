"""FeedTable stream record handlers: fanout tasks of posts, and the follower/following/post counters.

``functions/feed_stream/app.py`` routes records here by ``entity_type``. Every handler is idempotent:
Lambda redelivers records (a whole batch after an error, everything after the first failed record
after a partial batch response), and a redelivered record must change nothing more.

- A new post delivered by fanout puts one ``FanoutTask`` on the fanout queue; the worker pages the
  followers. A deleted one puts a REMOVE task. A redelivered record queues the task again: the
  worker writes the same keys (see feed.fanout). Pull posts (a celebrity's) are not fanned out:
  followers' home feeds merge them at read time. The post records which one it is (``delivery``).
- Counters: see platform.counters.
"""

from collections.abc import Sequence

from shopfeed.feed import fanout, items
from shopfeed.feed.fanout import FanoutAction, FanoutTask
from shopfeed.feed.models import Delivery
from shopfeed.platform import streams
from shopfeed.platform.config import settings
from shopfeed.platform.observability import logger, metrics


class FeedStreamSettings(fanout.FanoutSettings):
    pass


_ACTIONS = {streams.ChangeKind.INSERT: FanoutAction.ADD, streams.ChangeKind.REMOVE: FanoutAction.REMOVE}


def fanout_tasks(changes: Sequence[streams.ItemChange]) -> tuple[dict[str, FanoutTask], streams.Failures]:
    """The task of each post change that needs one, by sequence number, and the unreadable images."""
    tasks: dict[str, FanoutTask] = {}
    failures: streams.Failures = {}
    for change in changes:
        action = _ACTIONS.get(change.kind)
        if action is None:
            continue  # posts are immutable; a MODIFY is a counter changing
        image = change.new_image if change.kind is streams.ChangeKind.INSERT else change.old_image
        try:
            post = items.post_from(image or {})
        except (KeyError, ValueError) as error:  # ValueError includes pydantic's ValidationError
            failures[change.sequence_number] = error
            continue
        if post.delivery is Delivery.FANOUT:
            tasks[change.sequence_number] = FanoutTask(action=action, entry=items.entry_of(post))
    return tasks, failures


def queue_fanout(changes: Sequence[streams.ItemChange], queue: fanout.TaskQueue) -> streams.Failures:
    """Put the fanout task of each post change on the queue; a refused task fails only its record."""
    tasks, failures = fanout_tasks(changes)
    sequence_numbers = list(tasks)
    refused = queue.send(list(tasks.values())) if tasks else {}
    for position, reason in refused.items():
        failures[sequence_numbers[position]] = fanout.TasksNotQueued(reason)
    for sequence_number, error in failures.items():
        logger.warning("post not fanned out", sequence_number=sequence_number, error=str(error))
    metrics.add_metric(name="FanoutTaskQueued", unit="Count", value=len(tasks) - len(refused))
    return failures


def on_posts(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    _, queue = fanout.ports(settings(FeedStreamSettings))
    return queue_fanout(changes, queue)
