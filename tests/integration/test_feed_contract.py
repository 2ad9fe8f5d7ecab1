"""The Feed port's contract: the same scenarios against the in-memory fake and the real repository.

Unit tests trust InMemoryFeed to behave like FeedRepository on DynamoDB; this suite earns that trust.
Every test runs twice (``[in-memory]`` and ``[dynamodb]``, moto with the template's tables).
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest

from local.harness.builders import EARLIER, NOW
from local.harness.feed_builders import follow, post, posts_every_minute, profile
from local.harness.feed_seed import deliver, register_profiles
from shopfeed.feed import items
from shopfeed.feed.bootstrap import feed_store
from shopfeed.feed.models import Delivery, Post
from shopfeed.feed.services import Feed
from shopfeed.platform.errors import IdempotencyKeyReused, InvalidCursor, NotFound
from shopfeed.platform.idempotency import Created, IdempotentRequest
from shopfeed.platform.models import Page
from tests.support.expiry import reads_at
from tests.unit.feed_fakes import InMemoryFeed


@dataclass(frozen=True)
class Backend:
    """A Feed implementation plus the fanout worker's effect on it (entries for current followers)."""

    store: Feed
    fan_out: Callable[[Post], None]


@pytest.fixture(params=["in-memory", "dynamodb"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "in-memory":
        fake = InMemoryFeed()
        return Backend(fake, fake.fan_out)
    request.getfixturevalue("aws")
    reads_at(request.getfixturevalue("monkeypatch"), lambda: NOW)  # the feed's items were written around NOW
    real = feed_store()

    def fan_out(written: Post) -> None:
        deliver(written, [f.follower_id for f in real.list_followers(written.author_id, 500, None).items])

    return Backend(real, fan_out)


@pytest.fixture
def store(backend: Backend) -> Feed:
    users = ("U100", "U400", "U500")
    if isinstance(backend.store, InMemoryFeed):
        for user_id in users:
            backend.store.add_profile(profile(user_id))
    else:
        register_profiles(*users)  # as registration writes them (the user routes own that transaction)
    return backend.store


def every_page[T](fetch: Callable[[str | None], Page[T]]) -> list[list[T]]:
    pages: list[list[T]] = []
    cursor = None
    for _ in range(50):
        page = fetch(cursor)
        pages.append(page.items)
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor
    raise AssertionError("the cursor never ran out")


def every_item[T](fetch: Callable[[str | None], Page[T]]) -> list[T]:
    return [item for page in every_page(fetch) for item in page]


def add(store: Feed, written: Post, key: str | None = None) -> Created[Post]:
    request = IdempotentRequest.of(written.author_id, key or written.post_id, "create-post", {"text": written.text})
    return store.add_post(written, request, NOW)


def test_a_profile_reads_back(store: Feed) -> None:
    assert store.get_profile("U100") == profile("U100")
    assert store.get_profile("U404") is None


def test_a_post_is_written_once_per_key(store: Feed) -> None:
    # given
    written = post("U100")
    first = add(store, written, key="k1")
    # when
    again = add(store, post("U100"), key="k1")
    # then
    assert (first.replayed, again.replayed, again.value) == (False, True, first.value)
    assert store.get_post(written.post_id) == written
    with pytest.raises(IdempotencyKeyReused):
        add(store, post("U100", text="another text"), key="k1")


def test_a_deleted_post_is_gone_and_cannot_be_deleted_again(store: Feed) -> None:
    # given
    written = post("U100", tags=("aws",))
    add(store, written)
    # when
    store.delete_post(written)
    # then
    assert store.get_post(written.post_id) is None
    assert store.list_posts_with_tag("aws", 200, None).items == []
    with pytest.raises(NotFound):
        store.delete_post(written)


def test_posts_of_an_author_and_of_a_tag_page_newest_first(store: Feed) -> None:
    # given
    written = posts_every_minute("U100", 5)
    for each in written:
        add(store, each)
    add(store, post("U400", tags=("other",)))
    expected = [items.summary_of(p) for p in reversed(written)]
    # then
    assert every_item(lambda c: store.list_posts_of_author("U100", 2, c)) == expected
    assert every_item(lambda c: store.list_posts_with_tag("dynamodb", 2, c)) == expected


def test_following_twice_is_one_edge_and_unknown_users_are_not_found(store: Feed) -> None:
    # given
    edge = follow("U400", "U100")
    # then
    assert store.add_follow(edge) == (edge, True)
    assert store.add_follow(follow("U400", "U100", at=NOW + timedelta(minutes=1))) == (edge, False)
    with pytest.raises(NotFound):
        store.add_follow(follow("U400", "U404"))
    with pytest.raises(NotFound):
        store.add_follow(follow("U404", "U100"))
    assert store.remove_follow("U100", "U400") is True
    assert store.remove_follow("U100", "U400") is False


def test_followers_and_following_page_newest_first(store: Feed) -> None:
    # given
    edges = [follow(f, "U100", at=EARLIER + timedelta(minutes=n)) for n, f in enumerate(("U400", "U500"))]
    for edge in edges:
        store.add_follow(edge)
    # then
    assert every_page(lambda c: store.list_followers("U100", 1, c)) == [[edges[1]], [edges[0]]]
    assert store.list_following("U400", 500, None).items == [edges[0]]


def test_the_home_feed_merges_fanned_out_and_pulled_posts_and_skips_deleted_ones(backend: Backend, store: Feed) -> None:
    # given: U100 follows U400 (fanned out) and U500 (pulled)
    store.add_follow(follow("U100", "U400"))
    store.add_follow(follow("U100", "U500"))
    fanned = posts_every_minute("U400", 3)
    pulled = posts_every_minute("U500", 3, start=EARLIER + timedelta(seconds=30), delivery=Delivery.PULL)
    for written in fanned + pulled:
        add(store, written)
        if written.delivery is Delivery.FANOUT:
            backend.fan_out(written)
    store.delete_post(fanned[0])
    # when
    feed = every_item(lambda c: store.home_feed("U100", 2, c))
    # then
    expected = sorted(fanned[1:] + pulled, key=lambda p: (p.created_at, p.post_id), reverse=True)
    assert feed == expected


def test_a_cursor_of_another_list_is_refused(store: Feed) -> None:
    # given
    for written in posts_every_minute("U100", 3):
        add(store, written)
    cursor = store.list_posts_of_author("U100", 1, None).next_cursor
    # then
    with pytest.raises(InvalidCursor):
        store.list_posts_of_author("U400", 1, cursor)
    with pytest.raises(InvalidCursor):
        store.home_feed("U100", 1, cursor)
