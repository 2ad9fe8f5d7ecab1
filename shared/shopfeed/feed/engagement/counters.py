"""What likes, comments and follows count on posts and on the monthly leaderboard.

- **Post counters** (``likes_count``, ``comments_count``): one write per post per batch, exact
  (``platform.counters``). A like or comment removed after its post is gone counts nothing: the post's
  write is refused (``post_gone``) and dropped, as there is nothing left to count on.
- **Leaderboard**: a follow adds 1 to ``gained`` of its followee in the month of ``followed_at``, its
  removal takes it back from that month; so a month counts the followers gained in it who still
  follow. Created on first count, write-sharded by author.
"""

from shopfeed.feed import items, keys
from shopfeed.platform import exactly_once, streams
from shopfeed.platform.counters import Increment, sign_of


def counted_on_posts(change: streams.ItemChange) -> list[Increment]:
    """A like or a comment counts on its post; its removal takes it back."""
    sign = sign_of(change)
    if sign is None:
        return []
    if change.entity_type == items.LIKE:
        like = items.like_from(change.image or {})
        return [Increment(keys.post(like.post_id), items.LIKES_COUNT, sign)]
    if change.entity_type == items.COMMENT:
        comment = items.comment_from(change.image or {})
        return [Increment(keys.post(comment.post_id), items.COMMENTS_COUNT, sign)]
    return []


def post_gone(error: Exception) -> bool:
    """Whether a count failed only because its post is no longer there."""
    return (
        isinstance(error, exactly_once.EffectRefused)
        and error.reason.failed_condition
        and error.target.startswith(keys.POST)
    )


def counted_on_leaderboard(change: streams.ItemChange) -> list[Increment]:
    """A follow counts on its followee's entry of the month it was made; its removal takes it back."""
    sign = sign_of(change)
    if sign is None or change.entity_type != items.FOLLOW:
        return []
    follow = items.follow_from(change.image or {})
    return [Increment(keys.leaderboard_entry(follow.followed_at[:7], follow.followee_id), items.GAINED, sign)]
