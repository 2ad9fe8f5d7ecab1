"""FeedTable items ↔ feed domain models: every mapping round-trips, also through DynamoDB's wire format."""

from datetime import datetime

import pytest
from pydantic import ValidationError

from local.harness.feed_builders import follow, post, profile
from shopfeed.feed import items, keys
from shopfeed.feed.models import MAX_TAGS, Comment, Delivery, Like, Post, PullAuthor, normalise_tag
from shopfeed.platform import dynamo


def stored(item: dynamo.Item) -> dynamo.Item:
    """``item`` as a GetItem or Query would hand it back."""
    return dynamo.deserialize(dynamo.serialize(item))


def test_a_profile_round_trips_with_its_counters_and_its_handle_guard_points_at_it() -> None:
    # given
    ada = profile("U100", handle="ada", followers=3)
    # when
    item, guard = stored(items.profile_item(ada)), stored(items.handle_guard_item(ada))
    # then
    assert items.profile_from(item) == ada
    assert (item["entity_type"], item[items.FOLLOWERS_COUNT]) == (items.PROFILE, 3)
    assert (guard["entity_type"], guard["user_id"]) == (items.HANDLE_GUARD, "U100")
    assert {k: guard[k] for k in ("PK", "SK")} == keys.handle_guard("ada")


def test_a_profile_written_before_any_counter_reads_as_zero_counts() -> None:
    # given: an item as the first registration wrote it, without counter attributes
    item = {k: v for k, v in stored(items.profile_item(profile())).items() if not k.endswith("_count")}
    # then
    assert items.profile_from(item).followers_count == 0


def test_a_counter_taken_below_zero_reads_as_zero_not_as_a_failed_read() -> None:
    # given: a post whose like went to the dead-letter queue while its unlike was counted (seen under
    # --faults: GET /posts/{id} and every home feed holding it answered 500)
    item = stored(items.post_item(post())) | {"likes_count": -1}
    # then
    assert items.post_from(item).likes_count == 0


def test_a_follow_edge_round_trips_and_feeds_both_directions() -> None:
    # given
    edge = follow("U400", "U100")
    # when
    item = stored(items.follow_item(edge))
    # then
    assert items.follow_from(item) == edge
    assert item["entity_type"] == items.FOLLOW
    assert {k: item[k] for k in ("PK", "SK")} == keys.follow("U100", "U400")
    assert item["followers_pk"] == keys.user_partition("U100")
    assert item["following_pk"] == keys.user_partition("U400")
    assert items.follow_from({k: item[k] for k in keys.FOLLOW_ATTRIBUTES}) == edge


def test_a_fanned_out_post_round_trips_and_stays_out_of_the_pulled_posts_index() -> None:
    # given
    written = post(tags=("dynamodb", "aws"))
    # when
    item = stored(items.post_item(written))
    # then
    assert items.post_from(item) == written
    assert item["entity_type"] == items.POST
    assert item["by_author_pk"] == keys.user_partition(written.author_id)
    assert keys.PULLED_POSTS_BY_AUTHOR.partition_key not in item


def test_a_pulled_post_is_in_the_pulled_posts_index_with_what_a_feed_entry_holds() -> None:
    # given
    written = post(delivery=Delivery.PULL)
    # when
    item = stored(items.post_item(written))
    # then
    assert item[keys.PULLED_POSTS_BY_AUTHOR.partition_key] == keys.user_partition(written.author_id)
    projected = {k: item[k] for k in keys.FEED_ENTRY_ATTRIBUTES}
    assert items.feed_entry_from(projected) == items.entry_of(written)


def test_a_tag_item_carries_the_post_summary_its_index_projects() -> None:
    # given
    written = post(tags=("dynamodb", "aws"))
    # when
    tag = stored(items.post_tag_item(written, "aws"))
    # then
    assert tag["entity_type"] == items.POST_TAG
    assert {k: tag[k] for k in ("PK", "SK")} == keys.post_tag(written.post_id, "aws")
    assert tag["by_tag_pk"] == keys.tag_partition("aws", keys.tag_shard(written.post_id))
    summary = items.post_summary_from({k: tag[k] for k in keys.POST_SUMMARY_ATTRIBUTES})
    assert summary == items.summary_of(written)


def test_a_feed_entry_is_the_same_item_every_time_it_is_written() -> None:
    # given
    entry = items.entry_of(post())
    # when
    first, again = items.feed_entry_item("U400", entry), items.feed_entry_item("U400", entry)
    # then
    assert first == again
    assert items.feed_entry_from(stored(first)) == entry
    assert first["entity_type"] == items.FEED_ENTRY


def test_a_feed_entry_expires_the_retention_after_the_post() -> None:
    # given
    written = post()
    # when
    item = items.feed_entry_item("U400", items.entry_of(written))
    # then
    posted = datetime.fromisoformat(written.created_at).timestamp()
    assert item[items.EXPIRES_AT] == int(posted + items.FEED_RETENTION.total_seconds())


def test_a_pull_author_round_trips_and_expires_with_its_last_pulled_post() -> None:
    # given
    author = PullAuthor(author_id="U100", last_pull_post_at="2026-03-05T10:00:00.000Z")
    # when
    item = stored(items.pull_author_item(author))
    # then
    assert items.pull_author_from(item) == author
    assert item[items.EXPIRES_AT] > datetime.fromisoformat(author.last_pull_post_at).timestamp()


def test_projections_name_only_attributes_the_items_carry() -> None:
    # given an item of every type an index holds
    written = post(delivery=Delivery.PULL)
    samples = [
        items.post_item(written),
        items.post_tag_item(written, "dynamodb"),
        items.follow_item(follow("U400", "U100")),
        items.like_item(
            Like(post_id=written.post_id, user_id="U400", post_author_id="U100", liked_at=written.created_at)
        ),
        items.comment_item(
            Comment(
                comment_id=written.post_id,
                post_id=written.post_id,
                author_id="U400",
                post_author_id="U100",
                text="nice",
                created_at=written.created_at,
            )
        ),
    ]
    # then every index that keys them projects only what they carry
    for index in (i for i in keys.INDEXES if i.keys_of is not None and i.holds != ("Notification",)):
        (item,) = [i for i in samples if i["entity_type"] in index.holds]
        assert set(index.projection or ()) <= set(item), index.name
        assert {index.partition_key, index.sort_key} <= set(item), index.name


@pytest.mark.parametrize(("raw", "tag"), [("#DynamoDB", "dynamodb"), ("  aws ", "aws"), ("ｄｄｂ", "ddb")])
def test_tags_are_normalised(raw: str, tag: str) -> None:
    assert normalise_tag(raw) == tag


def test_a_post_keeps_each_tag_once_and_refuses_more_than_the_limit() -> None:
    assert post(tags=("aws", "dynamodb", "aws")).tags == ("aws", "dynamodb")
    with pytest.raises(ValidationError):
        Post.model_validate({**post().model_dump(), "tags": [f"t{n}" for n in range(MAX_TAGS + 1)]})
