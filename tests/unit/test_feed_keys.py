"""FeedTable key formats: the data model's persisted contract, built and parsed in one module."""

from collections.abc import Callable

import pytest

from shopfeed.feed import keys
from shopfeed.platform.clock import new_id

POST_ID = "01JQ8Z6V4C0000000000000000"
AT = "2026-03-05T10:00:00.000Z"


def test_a_users_profile_and_the_edges_to_their_followers_share_one_partition() -> None:
    # given
    profile, edge = keys.profile("U100"), keys.follow("U100", "U400")
    # then: the fanout worker pages followers with begins_with(SK, FOLLOWER#), the profile is not among them
    assert profile["PK"] == edge["PK"] == keys.user_partition("U100")
    assert edge["SK"].startswith(keys.FOLLOWER)
    assert not profile["SK"].startswith(keys.FOLLOWER)


def test_one_edge_per_pair_whatever_the_time_of_the_follow() -> None:
    assert keys.follow("U100", "U400") == keys.follow("U100", "U400")
    assert keys.follow("U100", "U400") != keys.follow("U400", "U100")


def test_the_handle_guard_is_case_insensitive() -> None:
    assert keys.handle_guard("Ada_L") == keys.handle_guard("ada_l")
    assert keys.handle_guard("ada_l")["SK"] == keys.GUARD


def test_both_directions_of_a_follow_sort_newest_first_by_follow_time() -> None:
    # given
    earlier = keys.follower_of("U100", "U999", "2026-03-05T09:59:59.999Z")
    later = keys.follower_of("U100", "U001", AT)
    # then
    assert earlier["followers_pk"] == later["followers_pk"] == keys.user_partition("U100")
    assert earlier["followers_sk"] < later["followers_sk"]
    assert keys.followed_by("U400", "U100", AT) == {
        keys.FOLLOWING_BY_USER.partition_key: keys.user_partition("U400"),
        keys.FOLLOWING_BY_USER.sort_key: f"{AT}#U100",
    }


def test_a_post_and_its_tag_items_share_the_post_partition() -> None:
    # when
    post, tags = keys.post(POST_ID), [keys.post_tag(POST_ID, tag) for tag in ("dynamodb", "aws")]
    # then: one Query on the partition finds everything a delete must remove
    assert {post["PK"], *(t["PK"] for t in tags)} == {keys.post_partition(POST_ID)}
    assert len({post["SK"], *(t["SK"] for t in tags)}) == 3


def test_the_home_feed_and_the_pulled_posts_index_sort_by_the_same_string() -> None:
    # when
    entry = keys.feed_entry("U400", AT, POST_ID)
    pulled = keys.pulled_post_by_author("U100", AT, POST_ID)
    by_author = keys.post_by_author("U100", AT, POST_ID)
    # then: the home feed merges feed entries and pulled posts by this one sort key
    assert entry["SK"] == pulled[keys.PULLED_POSTS_BY_AUTHOR.sort_key] == by_author["by_author_sk"]
    assert entry["PK"] == keys.feed_partition("U400")


def test_a_tags_posts_spread_over_every_tag_shard_and_stay_in_range() -> None:
    # when
    partitions = {keys.post_by_tag("dynamodb", AT, new_id())["by_tag_pk"] for _ in range(400)}
    # then
    assert partitions == {keys.tag_partition("dynamodb", n) for n in range(keys.TAG_SHARDS)}


@pytest.mark.parametrize(
    ("post_id", "shard"),
    [
        # Pinned: changing the hash strands every tag item already written under the old shard.
        ("01JQ8Z6V4Q0000000000000000", 0),
        ("01JQ8Z6V4C0000000000000000", 1),
        ("01JQ8Z6V4DXYZXYZXYZXYZXYZX", 2),
        ("01ARZ3NDEKTSV4RRFFQ69G5FAV", 3),
    ],
)
def test_the_tag_shard_of_a_post_is_the_same_in_every_process(post_id: str, shard: int) -> None:
    assert keys.tag_shard(post_id) == shard


def test_every_index_has_its_own_attribute_names() -> None:
    names = [name for index in keys.INDEXES for name in (index.partition_key, index.sort_key)]
    assert len(names) == len(set(names))
    assert len({index.name for index in keys.INDEXES}) == len(keys.INDEXES)


def test_parsers_invert_the_builders() -> None:
    assert keys.parse_post_id(keys.post(POST_ID)["PK"]) == POST_ID
    assert keys.parse_tag(keys.post_tag(POST_ID, "dynamodb")["SK"]) == "dynamodb"
    assert keys.parse_follower_id(keys.follow("U100", "U400")["SK"]) == "U400"
    assert keys.parse_user_id(keys.profile("U100")["PK"]) == "U100"
    assert keys.parse_user_id(keys.pull_author("U100")["SK"]) == "U100"


@pytest.mark.parametrize(
    ("parse", "foreign"),
    [
        pytest.param(keys.parse_post_id, keys.profile("U100")["PK"], id="post-id-of-a-user-key"),
        pytest.param(keys.parse_tag, keys.META, id="tag-of-a-post-header"),
        pytest.param(keys.parse_follower_id, keys.PROFILE, id="follower-of-a-profile"),
        pytest.param(keys.parse_user_id, keys.post(POST_ID)["PK"], id="user-id-of-a-post-key"),
    ],
)
def test_parsers_reject_keys_of_another_entity(parse: Callable[[str], object], foreign: str) -> None:
    with pytest.raises(ValueError, match="not a"):
        parse(foreign)
