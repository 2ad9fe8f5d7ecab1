"""Feed use cases against the in-memory port: posts, follows, profiles and the home feed."""

import pytest

from local.harness.feed_builders import profile
from shopfeed.feed import services
from shopfeed.feed.models import Delivery, Post
from shopfeed.platform.errors import (
    Forbidden,
    IdempotencyKeyReused,
    InvalidCursor,
    InvalidRequest,
    NotFound,
)
from shopfeed.platform.idempotency import IdempotentRequest
from shopfeed.platform.identity import Caller
from tests.unit.feed_fakes import InMemoryFeed

THRESHOLD = 3
U100, U400, U500 = Caller("U100", frozenset()), Caller("U400", frozenset()), Caller("U500", frozenset())


@pytest.fixture
def store() -> InMemoryFeed:
    fake = InMemoryFeed()
    for user_id in ("U100", "U400", "U500"):
        fake.add_profile(profile(user_id))
    return fake


def write(store: InMemoryFeed, caller: Caller, text: str, tags: tuple[str, ...] = (), key: str | None = None) -> Post:
    request = IdempotentRequest.of(caller.user_id, key or text, "create-post", {"text": text, "tags": list(tags)})
    answer = services.create_post(store, caller, request, text, tags, THRESHOLD)
    return answer.value


def publish(store: InMemoryFeed, caller: Caller, text: str) -> Post:
    """Write a post and let the fanout worker deliver it, as the stream consumer would."""
    post = write(store, caller, text)
    if post.delivery is Delivery.FANOUT:
        store.fan_out(post)
    return post


def whole_feed(store: InMemoryFeed, caller: Caller, limit: int) -> list[Post]:
    posts: list[Post] = []
    cursor = None
    while True:
        page = services.read_home_feed(store, caller, limit, cursor)
        posts += page.items
        cursor = page.next_cursor
        if cursor is None:
            return posts


def newest_first(posts: list[Post]) -> list[Post]:
    """Posts in home-feed order: by time, then id (posts of the same millisecond sort by their ULID)."""
    return sorted(posts, key=lambda p: (p.created_at, p.post_id), reverse=True)


def test_a_post_of_an_author_below_the_threshold_is_fanned_out(store: InMemoryFeed) -> None:
    # when
    post = write(store, U100, "hello", ("dynamodb",))
    # then
    assert post.delivery is Delivery.FANOUT
    assert services.read_post(store, post.post_id) == post


def test_a_post_of_an_author_at_the_threshold_is_pulled_by_readers(store: InMemoryFeed) -> None:
    # given
    store.count_followers("U100", THRESHOLD)
    # when
    post = write(store, U100, "hello")
    # then
    assert post.delivery is Delivery.PULL


def test_a_user_without_a_profile_cannot_post(store: InMemoryFeed) -> None:
    with pytest.raises(NotFound):
        write(store, Caller("U999", frozenset()), "hello")


def test_a_retried_post_answers_the_first_post_and_writes_nothing_more(store: InMemoryFeed) -> None:
    # given
    first = write(store, U100, "hello", key="k1")
    # when
    again = write(store, U100, "hello", key="k1")
    # then
    assert again == first
    assert [p.post_id for p in services.list_posts_of_author(store, "U100", 50, None).items] == [first.post_id]


def test_a_key_reused_with_another_text_is_refused(store: InMemoryFeed) -> None:
    # given
    write(store, U100, "hello", key="k1")
    # then
    with pytest.raises(IdempotencyKeyReused):
        write(store, U100, "something else", key="k1")


def test_only_the_author_deletes_a_post(store: InMemoryFeed) -> None:
    # given
    post = write(store, U100, "hello")
    # when / then
    with pytest.raises(Forbidden):
        services.delete_post(store, U400, post.post_id)
    assert services.read_post(store, post.post_id) == post
    services.delete_post(store, U100, post.post_id)
    with pytest.raises(NotFound):
        services.read_post(store, post.post_id)


def test_following_twice_is_one_edge(store: InMemoryFeed) -> None:
    # when
    first, created = services.follow_user(store, U400, "U100")
    again, created_again = services.follow_user(store, U400, "U100")
    # then
    assert (created, created_again) == (True, False)
    assert again == first
    assert services.list_followers(store, "U100", 500, None).items == [first]
    assert services.list_following(store, "U400", 500, None).items == [first]


def test_nobody_follows_themself(store: InMemoryFeed) -> None:
    with pytest.raises(InvalidRequest):
        services.follow_user(store, U100, "U100")


def test_following_or_unfollowing_an_unknown_user_is_not_found(store: InMemoryFeed) -> None:
    with pytest.raises(NotFound):
        services.follow_user(store, U100, "U999")
    with pytest.raises(NotFound):
        services.unfollow_user(store, U100, "U999")


def test_unfollowing_someone_not_followed_changes_nothing(store: InMemoryFeed) -> None:
    services.unfollow_user(store, U400, "U100")
    assert services.list_following(store, "U400", 500, None).items == []


def test_the_home_feed_merges_fanned_out_and_pulled_posts_newest_first(store: InMemoryFeed) -> None:
    # given: U400 follows U100 (fanned out) and U500 (a celebrity)
    services.follow_user(store, U400, "U100")
    services.follow_user(store, U400, "U500")
    store.count_followers("U500", THRESHOLD)
    posts = [publish(store, U500 if n % 2 else U100, f"post {n}") for n in range(7)]
    # then
    assert whole_feed(store, U400, 2) == newest_first(posts)


def test_an_author_crossing_the_threshold_either_way_loses_and_doubles_nothing(store: InMemoryFeed) -> None:
    # given
    services.follow_user(store, U400, "U100")
    before = [publish(store, U100, f"fanned {n}") for n in range(3)]
    store.count_followers("U100", THRESHOLD)
    during = [publish(store, U100, f"pulled {n}") for n in range(3)]
    store.count_followers("U100", -THRESHOLD)
    after = [publish(store, U100, f"fanned again {n}") for n in range(3)]
    # then
    assert [p.delivery for p in during] == [Delivery.PULL] * 3
    assert whole_feed(store, U400, 4) == newest_first(before + during + after)


def test_a_deleted_post_leaves_the_home_feed(store: InMemoryFeed) -> None:
    # given
    services.follow_user(store, U400, "U100")
    kept, deleted = publish(store, U100, "kept"), publish(store, U100, "deleted")
    # when
    services.delete_post(store, U100, deleted.post_id)
    # then
    assert [p.post_id for p in services.read_home_feed(store, U400, 50, None).items] == [kept.post_id]


def test_a_cursor_of_another_users_feed_is_refused(store: InMemoryFeed) -> None:
    # given
    services.follow_user(store, U400, "U100")
    for n in range(3):
        publish(store, U100, f"post {n}")
    cursor = services.read_home_feed(store, U400, 1, None).next_cursor
    # then
    with pytest.raises(InvalidCursor):
        services.read_home_feed(store, U500, 1, cursor)
