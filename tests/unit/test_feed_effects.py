"""The feed stream consumer's map of effects: what happens when each record type is written."""

from functions.feed_stream.app import ROUTES
from shopfeed.feed import items
from shopfeed.feed.consumers import feed_stream as on
from shopfeed.platform.streams import handlers_of


def test_each_record_type_has_its_effects() -> None:
    assert {entity_type: set(handlers_of(route)) for entity_type, route in ROUTES.items()} == {
        items.POST: {on.fan_out, on.count_on_profiles, on.remove_engagement, on.sync_post_search, on.notify_mentioned},
        items.FOLLOW: {on.count_on_profiles, on.notify, on.count_on_leaderboard, on.settle_follow},
        items.LIKE: {on.count_on_posts, on.notify},
        items.COMMENT: {on.count_on_posts, on.notify, on.notify_mentioned},
    }


def test_posts_and_follows_share_one_profile_counter_so_a_batch_writes_each_profile_once() -> None:
    # The platform hands a handler routed for several types all of their records in one call.
    posts, follows = handlers_of(ROUTES[items.POST]), handlers_of(ROUTES[items.FOLLOW])
    assert [h for h in posts if h in follows] == [on.count_on_profiles]


def test_no_effect_is_routed_twice_for_one_type() -> None:
    for route in ROUTES.values():
        assert len(set(handlers_of(route))) == len(handlers_of(route))
