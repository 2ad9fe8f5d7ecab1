"""The home feed (FEED-003) on DynamoDB Local: mixed feeds of hundreds of posts paged through the merge."""

from datetime import timedelta

import pytest

from local.harness import feed_builders as builders
from local.harness.builders import EARLIER
from local.harness.client import ApiClient
from local.harness.factories import pages
from local.harness.feed_factories import every_item, follow
from local.harness.feed_seed import feed_table, newest_first, publish, register_profiles, set_followers_count
from shopfeed.feed import items, repository
from shopfeed.feed.models import Delivery, PullAuthor
from shopfeed.platform import clients, dynamo
from shopfeed.platform.batch_writes import write_all
from tests.support.expiry import reads_at

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

THRESHOLD = 3


@pytest.fixture
def feed_api(tables: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> ApiClient:
    from functions.feed_api.app import lambda_handler

    monkeypatch.setenv("CELEBRITY_FOLLOWER_THRESHOLD", str(THRESHOLD))
    reads_at(monkeypatch, lambda: EARLIER + timedelta(days=1))  # the posts here are from EARLIER on
    register_profiles("U100", "U400", "U500", "U600")
    return ApiClient(lambda_handler, sub="U100")


def test_paging_a_mixed_feed_of_300_posts_returns_each_post_once_in_order(feed_api: ApiClient) -> None:
    # given: U100 follows two fanned-out authors and a celebrity; 300 posts, one in three pulled
    for author in ("U400", "U500", "U600"):
        follow(feed_api, author)
    set_followers_count("U600", THRESHOLD)
    written = [publish(feed_api.as_user(f"U{n % 3 + 4}00"), f"post {n}") for n in range(300)]
    # when
    feed = every_item(feed_api, "/feed", limit=50)
    # then
    assert len(feed) == 300
    assert [p["post_id"] for p in feed] == [p["post_id"] for p in newest_first(written)]
    assert sum(p["author_id"] == "U600" for p in feed) == 100


def test_a_feed_merged_from_50_celebrities_and_1000_entries_pages_to_the_end_under_the_cursor_bound(
    feed_api: ApiClient,
) -> None:
    # given: U100 follows 50 celebrities with 22-character ids (two pulled posts each) and has 1,000
    # fanned-out entries of ten other authors, all interleaved in time
    celebrities = [f"celebrity-{n:02d}-abcdefghi" for n in range(50)]
    assert {len(c) for c in celebrities} == {22}
    register_profiles(*celebrities, followers=THRESHOLD)
    pulled = [
        builders.post(c, at=EARLIER + timedelta(seconds=40 * n + 20 * k), delivery=Delivery.PULL)
        for n, c in enumerate(celebrities)
        for k in range(2)
    ]
    fanned = [builders.post(f"U{n % 10}", at=EARLIER + timedelta(seconds=2 * n + 1)) for n in range(1000)]
    last_pull = {p.author_id: p.created_at for p in pulled}
    write_all(
        clients.dynamodb(),
        feed_table(),
        [
            {"PutRequest": {"Item": dynamo.serialize(item)}}
            for item in (
                *(items.post_item(p) for p in pulled + fanned),
                *(items.feed_entry_item("U100", items.entry_of(p)) for p in fanned),
                *(items.follow_item(builders.follow("U100", c)) for c in celebrities),
                *(items.pull_author_item(PullAuthor(author_id=a, last_pull_post_at=t)) for a, t in last_pull.items()),
            )
        ],
    )
    # when
    walked = list(pages(feed_api, "/feed", limit=50))
    # then: every post once, newest first, and no cursor near the API's 4,096 characters
    feed = [p["post_id"] for page in walked for p in page["items"]]
    assert feed == [p.post_id for p in sorted(pulled + fanned, key=lambda p: (p.created_at, p.post_id), reverse=True)]
    cursors = [page["next_cursor"] for page in walked if page["next_cursor"]]
    assert (len(walked), len(cursors)) == (1100 // 50, 1100 // 50 - 1)
    assert max(map(len, cursors)) <= repository.MAX_HOME_CURSOR_LENGTH
