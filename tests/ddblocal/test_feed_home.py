"""The home feed (FEED-003) on DynamoDB Local: a mixed feed of 300 posts paged through the merge."""

import pytest

from tests.support.client import ApiClient
from tests.support.feed_factories import every_item, follow
from tests.support.feed_seed import newest_first, publish, register_profiles, set_followers_count

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group("ddblocal")]

THRESHOLD = 3


@pytest.fixture
def feed_api(tables: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> ApiClient:
    from functions.feed_api.app import lambda_handler

    monkeypatch.setenv("CELEBRITY_FOLLOWER_THRESHOLD", str(THRESHOLD))
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
