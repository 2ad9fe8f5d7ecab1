"""Follow races on DynamoDB Local, one container per request, then the FeedTable stream delivered to
its consumer as the template's event source mapping does: the counters end exact."""

import pytest

from local.harness.client import ApiClient
from local.harness.fanout import FanoutLine, counts
from local.harness.feed_seed import register_profiles
from local.harness.feed_stream import deliver_all, feed_stream_poller
from local.harness.race import Call, all_at_once
from tests.conftest import reset_caches

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

FOLLOWERS = [f"U{n:03d}" for n in range(1, 21)]


@pytest.fixture
def feed_api(tables: dict[str, str], sqs_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> ApiClient:
    from functions.feed_api.app import lambda_handler

    # Each follow queues its backfill on the fanout queue (SQS in a moto server; left undelivered here).
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", sqs_endpoint)
    reset_caches()
    monkeypatch.setenv("FANOUT_QUEUE_URL", FanoutLine.create().url)
    reset_caches()
    register_profiles("U100", *FOLLOWERS)
    return ApiClient(lambda_handler, sub="U100")


def test_twenty_users_following_one_user_at_once_leave_twenty_followers(
    feed_api: ApiClient, tables: dict[str, str]
) -> None:
    # given
    table = tables["FeedTable"]
    follows = [Call("PUT", "/users/U100/followers/me", sub=follower) for follower in FOLLOWERS]
    # when
    answers = all_at_once(follows, warm_up=Call("GET", "/users/U100"))
    deliver_all(feed_stream_poller(table))
    # then
    assert [a.status for a in answers] == [201] * 20, [a.text for a in answers if a.status != 201]
    assert counts(table, "U100") == (20, 0, 0)
    assert {counts(table, follower) for follower in FOLLOWERS} == {(0, 1, 0)}


def test_twenty_identical_follows_at_once_make_one_edge_and_count_one(
    feed_api: ApiClient, tables: dict[str, str]
) -> None:
    # given
    table = tables["FeedTable"]
    same = Call("PUT", "/users/U100/followers/me", sub="U001")
    # when
    answers = all_at_once([same] * 20, warm_up=Call("GET", "/users/U100", sub="U001"))
    deliver_all(feed_stream_poller(table))
    # then
    assert sorted(a.status for a in answers) == [200] * 19 + [201], [a.text for a in answers]
    assert [f["follower_id"] for f in feed_api.get("/users/U100/followers").json["items"]] == ["U001"]
    assert counts(table, "U100") == (1, 0, 0)
    assert counts(table, "U001") == (0, 1, 0)
