"""What posts and follows count on profiles: a post on its author's ``posts_count``, a follow on the
followee's ``followers_count`` and the follower's ``following_count``; a REMOVE takes it back.

Posts and follows are one rule, counted by one stream handler that gets both record types at once
(``platform.streams`` groups a batch by handler), so a profile both kinds touch in one batch still takes
one write; ``platform.counters`` keeps it exact under redelivery.
"""

from shopfeed.feed import items, keys
from shopfeed.platform import streams
from shopfeed.platform.counters import Increment, sign_of


def counted_on_profiles(change: streams.ItemChange) -> list[Increment]:
    """What a post or a follow counts on profiles: +1 when written, -1 when removed."""
    sign = sign_of(change)
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
