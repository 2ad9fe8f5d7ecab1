"""The feed API against moto, FeedTable built from template.yaml: each pattern's result, order, paging
and DynamoDB round trips (FEED-002, 003, 004, 007, 008)."""

import json
from datetime import timedelta
from typing import Any

import pytest

from local.harness.apigw import sample
from local.harness.builders import EARLIER
from local.harness.client import ApiClient, LambdaContext
from local.harness.factories import SteppingClock, pages
from local.harness.feed_factories import every_item, follow, post_body, write_post
from local.harness.feed_seed import deliver, feed_table, newest_first, publish, register_profiles, set_followers_count
from local.harness.tables import table_items
from shopfeed.feed import items, keys, repository
from shopfeed.feed.bootstrap import feed_store
from shopfeed.feed.models import Post
from shopfeed.platform import clients, dynamo
from shopfeed.platform.cursors import CursorCodec
from tests.conftest import reset_caches
from tests.support.calls import dynamodb_calls
from tests.support.expiry import reads_at

THRESHOLD = 3


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> SteppingClock:
    """Every post and follow a second after the one before: their order is known."""
    stepping = SteppingClock(EARLIER)
    monkeypatch.setattr("shopfeed.feed.services.utc_now", stepping)
    reads_at(monkeypatch, lambda: stepping.now)
    return stepping


@pytest.fixture
def feed_api(aws: None, monkeypatch: pytest.MonkeyPatch) -> ApiClient:
    from functions.feed_api.app import lambda_handler

    monkeypatch.setenv("CELEBRITY_FOLLOWER_THRESHOLD", str(THRESHOLD))
    register_profiles("U100", "U400", "U500", "U600")
    return ApiClient(lambda_handler, sub="U100")


def feed_items() -> list[dict[str, Any]]:
    return table_items(feed_table())


def entity_types() -> list[str]:
    return sorted(i["entity_type"] for i in feed_items() if i["entity_type"] not in (items.PROFILE, items.HANDLE_GUARD))


# -- posts --------------------------------------------------------------------------------------


def test_a_post_its_tag_items_and_its_key_are_one_transaction(feed_api: ApiClient) -> None:
    # when
    with dynamodb_calls() as calls:
        answer = feed_api.post("/posts", post_body("hello", "DynamoDB", "aws"), headers={"Idempotency-Key": "k1"})
    # then
    assert answer.status == 201, answer.text
    assert calls.operations == ["GetItem", "TransactWriteItems"]  # the author's profile, then the writes
    assert entity_types() == sorted([items.POST, items.POST_TAG, items.POST_TAG, "IdempotencyKey"])
    assert {i["tag"] for i in feed_items() if i["entity_type"] == items.POST_TAG} == {"dynamodb", "aws"}


def test_a_retried_post_is_answered_from_its_key_record_and_writes_nothing(feed_api: ApiClient) -> None:
    # given
    first = feed_api.post("/posts", post_body("hello", "aws"), headers={"Idempotency-Key": "k1"})
    before = feed_items()
    # when
    with dynamodb_calls() as calls:
        again = feed_api.post("/posts", post_body("hello", "aws"), headers={"Idempotency-Key": "k1"})
    # then
    assert (again.status, again.json) == (201, first.json)
    assert calls.operations == ["GetItem", "TransactWriteItems"]
    assert feed_items() == before


def test_a_malformed_post_writes_nothing(feed_api: ApiClient) -> None:
    # given
    before = feed_items()
    # when
    answer = feed_api.post("/posts", {"text": "hi", "tags": ["a b"]}, headers={"Idempotency-Key": "k1"})
    # then
    assert answer.status == 422
    assert feed_items() == before


def test_get_a_post_is_one_strongly_consistent_get_item(feed_api: ApiClient) -> None:
    # given
    post = write_post(feed_api, "hello", "aws")
    # when
    with dynamodb_calls() as calls:
        answer = feed_api.get(f"/posts/{post['post_id']}")
    # then
    assert answer.json == post
    assert calls.operations == ["GetItem"]
    assert calls.requests[0][1]["ConsistentRead"] is True  # a post just liked shows its like (FEED-004)


def test_deleting_my_post_removes_it_and_its_tag_items(feed_api: ApiClient) -> None:
    # given
    post = write_post(feed_api, "hello", "aws", "dynamodb")
    # when
    with dynamodb_calls() as calls:
        answer = feed_api.delete(f"/posts/{post['post_id']}")
    # then
    assert answer.status == 204
    assert calls.operations == ["GetItem", "TransactWriteItems"]
    assert entity_types() == ["IdempotencyKey"]
    assert every_item(feed_api, "/tags/aws/posts") == []


def test_deleting_another_users_post_is_403_and_removes_nothing(feed_api: ApiClient) -> None:
    # given
    post = write_post(feed_api, "hello", "aws")
    before = feed_items()
    # when
    answer = feed_api.as_user("U400").delete(f"/posts/{post['post_id']}")
    # then
    assert answer.status == 403
    assert feed_items() == before


def test_a_users_posts_newest_first_one_query_a_page(feed_api: ApiClient) -> None:
    # given
    written = [write_post(feed_api, f"post {n}") for n in range(5)]
    write_post(feed_api.as_user("U400"), "someone else's")
    # when
    with dynamodb_calls() as calls:
        listed = list(pages(feed_api, "/users/U100/posts", limit=2))
    # then
    assert [p["post_id"] for page in listed for p in page["items"]] == [p["post_id"] for p in reversed(written)]
    assert calls.operations == ["Query"] * 3
    assert listed[0]["items"][0] == {k: written[-1][k] for k in keys.POST_SUMMARY_ATTRIBUTES}


def test_posts_by_tag_newest_first_merged_over_the_tag_shards(feed_api: ApiClient) -> None:
    # given
    written = [write_post(feed_api.as_user(f"U{n % 2 + 4}00"), f"post {n}", "aws") for n in range(9)]
    write_post(feed_api, "untagged")
    # when
    with dynamodb_calls() as calls:
        first = feed_api.get("/tags/aws/posts", query={"limit": 4})
    found = every_item(feed_api, "/tags/aws/posts", limit=4)
    # then
    assert calls.operations == ["Query"] * 4  # one per shard
    assert [p["post_id"] for p in found] == [p["post_id"] for p in reversed(written)]
    assert first.json["items"] == found[:4]


# -- follows ------------------------------------------------------------------------------------


def test_following_twice_is_one_edge_and_one_round_trip_each(feed_api: ApiClient) -> None:
    # when
    with dynamodb_calls() as calls:
        first = feed_api.put("/users/U400/followers/me")
        again = feed_api.put("/users/U400/followers/me")
    # then
    assert (first.status, again.status) == (201, 200)
    assert again.json == first.json
    assert calls.operations == ["TransactWriteItems"] * 2
    assert entity_types() == [items.FOLLOW]


@pytest.mark.parametrize(("user", "status"), [("U999", 404), ("U100", 422)])
def test_following_an_unknown_user_or_myself_writes_nothing(feed_api: ApiClient, user: str, status: int) -> None:
    # given
    before = feed_items()
    # then
    assert feed_api.put(f"/users/{user}/followers/me").status == status
    assert feed_items() == before


def test_a_users_followers_and_following_newest_first(feed_api: ApiClient) -> None:
    # given: U400, U500, U600 follow U100 in this order; U100 follows U400
    for follower in ("U400", "U500", "U600"):
        follow(feed_api.as_user(follower), "U100")
    follow(feed_api, "U400")
    # when
    with dynamodb_calls() as calls:
        followers = list(pages(feed_api, "/users/U100/followers", limit=2))
    # then
    assert [f["follower_id"] for page in followers for f in page["items"]] == ["U600", "U500", "U400"]
    assert calls.operations == ["Query"] * 2
    assert [f["followee_id"] for f in every_item(feed_api, "/users/U400/following")] == ["U100"]
    assert [f["followee_id"] for f in every_item(feed_api, "/users/me/following")] == ["U400"]


def test_unfollowing_removes_the_edge_once(feed_api: ApiClient) -> None:
    # given
    follow(feed_api, "U400")
    # when
    first, again = feed_api.delete("/users/U400/followers/me"), feed_api.delete("/users/U400/followers/me")
    # then
    assert (first.status, again.status) == (204, 204)
    assert entity_types() == []
    assert feed_api.delete("/users/U999/followers/me").status == 404


# -- the home feed (FEED-003) -------------------------------------------------------------------


@pytest.fixture
def celebrity(feed_api: ApiClient) -> str:
    """U500, above the threshold, followed by U100."""
    follow(feed_api, "U500")
    set_followers_count("U500", THRESHOLD)
    return "U500"


def test_a_celebritys_post_reaches_a_followers_feed_through_the_merge(feed_api: ApiClient, celebrity: str) -> None:
    # given
    follow(feed_api, "U400")
    older = publish(feed_api.as_user("U400"), "fanned out")
    newer = publish(feed_api.as_user(celebrity), "pulled")
    # when
    with dynamodb_calls() as calls:
        answer = feed_api.get("/feed")
    # then
    assert [p["post_id"] for p in answer.json["items"]] == [newer["post_id"], older["post_id"]]
    assert answer.json["items"][0] == newer
    assert answer.json["next_cursor"] is None
    # my feed partition and the celebrity's pulled posts, the registry and my edge to it, the posts
    assert calls.counts() == {"Query": 3, "BatchGetItem": 2}
    assert not [i for i in feed_items() if i["entity_type"] == items.FEED_ENTRY and i["post_id"] == newer["post_id"]]


def test_the_home_feed_reads_eventually_and_hydrates_only_the_posts_fields(feed_api: ApiClient, celebrity: str) -> None:
    # given
    follow(feed_api, "U400")
    publish(feed_api.as_user("U400"), "fanned out")
    publish(feed_api.as_user(celebrity), "pulled")
    # when
    with dynamodb_calls() as calls:
        assert feed_api.get("/feed").status == 200
    # then: no strongly consistent read (FEED-003 is eventual: half the RCU), posts without their index keys
    batches = [
        batch for op, params in calls.requests if op == "BatchGetItem" for batch in params["RequestItems"].values()
    ]
    queries = [params for op, params in calls.requests if op == "Query"]
    assert [batch["ConsistentRead"] for batch in batches] == [False, False]
    assert not [query for query in queries if query.get("ConsistentRead")]
    posts = batches[-1]
    assert set(posts["ExpressionAttributeNames"].values()) == set(Post.model_fields)


def test_paging_a_mixed_feed_returns_each_post_once_in_order(feed_api: ApiClient, celebrity: str) -> None:
    # given: 30 posts, one in three by the celebrity (300 on DynamoDB Local: tests/ddblocal/test_feed_scale.py)
    follow(feed_api, "U400")
    written = [publish(feed_api.as_user(celebrity if n % 3 == 0 else "U400"), f"post {n}") for n in range(30)]
    # when
    feed = every_item(feed_api, "/feed", limit=7)
    # then
    assert [p["post_id"] for p in feed] == [p["post_id"] for p in newest_first(written)]


def test_later_pages_merge_the_same_celebrities_without_checking_follow_edges_again(
    feed_api: ApiClient, celebrity: str
) -> None:
    # given
    for n in range(4):
        publish(feed_api.as_user(celebrity), f"pulled {n}")
    cursor = feed_api.get("/feed", query={"limit": 2}).json["next_cursor"]
    # when
    with dynamodb_calls() as calls:
        answer = feed_api.get("/feed", query={"limit": 2, "cursor": cursor})
    # then
    assert [p["text"] for p in answer.json["items"]] == ["pulled 1", "pulled 0"]
    # the registry (this repository caches it for no time), the celebrity's pulled posts and the page's
    # posts; no follow edge is read, and my (empty) feed partition ended on page 1
    assert calls.counts() == {"Query": 2, "BatchGetItem": 1}


def test_an_author_crossing_the_threshold_both_ways_loses_and_doubles_nothing(feed_api: ApiClient) -> None:
    # given
    follow(feed_api, "U400")
    author = feed_api.as_user("U400")
    before = [publish(author, f"fanned {n}") for n in range(3)]
    set_followers_count("U400", THRESHOLD)
    during = [publish(author, f"pulled {n}") for n in range(3)]
    set_followers_count("U400", 1)
    after = [publish(author, f"fanned again {n}") for n in range(3)]
    # when
    feed = every_item(feed_api, "/feed", limit=4)
    # then
    assert [p["post_id"] for p in feed] == [p["post_id"] for p in newest_first(before + during + after)]


def test_unfollowing_a_celebrity_drops_its_posts_at_once_while_fanned_out_entries_stay(
    feed_api: ApiClient, celebrity: str
) -> None:
    # given
    follow(feed_api, "U400")
    fanned = publish(feed_api.as_user("U400"), "fanned out")
    publish(feed_api.as_user(celebrity), "pulled")
    # when
    feed_api.delete(f"/users/{celebrity}/followers/me")
    feed_api.delete("/users/U400/followers/me")
    # then
    assert [p["post_id"] for p in every_item(feed_api, "/feed")] == [fanned["post_id"]]


def test_a_deleted_post_leaves_the_feed_even_before_its_entries_are_removed(feed_api: ApiClient) -> None:
    # given
    follow(feed_api, "U400")
    kept = publish(feed_api.as_user("U400"), "kept")
    deleted = publish(feed_api.as_user("U400"), "deleted")
    # when
    feed_api.as_user("U400").delete(f"/posts/{deleted['post_id']}")
    # then
    assert [p["post_id"] for p in every_item(feed_api, "/feed")] == [kept["post_id"]]


def test_entries_and_celebrities_past_their_ttl_leave_the_feed_before_ttl_deletes_them(
    feed_api: ApiClient, celebrity: str, clock: SteppingClock
) -> None:
    # given a fanned-out post and a celebrity's pulled post in my feed
    follow(feed_api, "U400")
    publish(feed_api.as_user("U400"), "fanned out")
    publish(feed_api.as_user(celebrity), "pulled")
    assert len(every_item(feed_api, "/feed")) == 2
    # when the feed's retention has passed, but TTL has deleted nothing yet (a new container reads)
    clock.now += items.FEED_RETENTION + timedelta(minutes=1)
    reset_caches()
    # then neither is in the feed: my entry and the celebrity's registry item are past their TTL
    assert every_item(feed_api, "/feed") == []
    assert {i["entity_type"] for i in feed_items()} >= {items.FEED_ENTRY, items.PULL_AUTHOR}


@pytest.mark.parametrize("path", ["/feed", "/users/U100/posts", "/tags/aws/posts", "/users/U100/followers"])
def test_a_cursor_from_another_list_or_user_is_400(feed_api: ApiClient, celebrity: str, path: str) -> None:
    # given: a valid cursor of U400's feed
    follow(feed_api.as_user("U400"), celebrity)
    for n in range(3):
        publish(feed_api.as_user(celebrity), f"pulled {n}")
    foreign = feed_api.as_user("U400").get("/feed", query={"limit": 1}).json["next_cursor"]
    # then
    assert feed_api.get(path, query={"cursor": foreign}).status == 400
    assert feed_api.get(path, query={"cursor": foreign[:-2]}).status == 400


def test_the_sample_events_are_served_as_sam_local_invoke_would_send_them(feed_api: ApiClient) -> None:
    from functions.feed_api.app import lambda_handler

    def invoke(name: str) -> dict[str, Any]:
        answer = lambda_handler(sample(f"api/{name}.json"), LambdaContext())
        return {"status": answer["statusCode"], "body": json.loads(answer["body"])}

    # when: U400 follows U100, U100 posts, the post is fanned out, U400 reads the feed
    followed = invoke("follow_user")
    created = invoke("create_post")
    post = feed_store().get_post(created["body"]["post_id"])
    assert post is not None
    deliver(post, ["U400"])
    feed = invoke("get_feed")
    # then
    assert (followed["status"], created["status"], feed["status"]) == (201, 201, 200)
    assert created["body"]["tags"] == ["dynamodb"]
    assert [p["post_id"] for p in feed["body"]["items"]] == [created["body"]["post_id"]]


def test_the_merge_takes_the_most_recently_active_celebrities_up_to_its_bound(
    feed_api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: U100 follows one more celebrity than the merge takes (a bound of 5 here), each with one pulled post
    bound = 5
    monkeypatch.setattr(repository, "MAX_MERGED_AUTHORS", bound)
    celebrities = [f"C{n:03d}" for n in range(bound + 1)]
    register_profiles(*celebrities, followers=THRESHOLD)
    for celebrity in celebrities:
        follow(feed_api, celebrity)
        publish(feed_api.as_user(celebrity), f"by {celebrity}")
    # when
    with dynamodb_calls() as calls:
        feed = feed_api.get("/feed").json["items"]
    # then: the least recently active celebrity is left out; one Query per merged celebrity
    assert [p["author_id"] for p in feed] == list(reversed(celebrities[1:]))
    assert calls.counts()["Query"] == 1 + 1 + bound  # my feed, the registry, the celebrities


def test_the_registry_of_celebrities_is_read_once_per_container_while_cached(
    feed_api: ApiClient, celebrity: str
) -> None:
    # given: a repository keeping the registry 30 s, on a clock the test moves
    now = [0.0]
    table = dynamo.Table(clients.dynamodb(), feed_table())
    store = repository.FeedRepository(table, CursorCodec(b"test"), 30, clock=lambda: now[0])
    publish(feed_api.as_user(celebrity), "pulled")
    # when
    with dynamodb_calls() as first:
        store.home_feed("U100", 50, None)
    now[0] = 29.0
    with dynamodb_calls() as cached:
        store.home_feed("U100", 50, None)
    now[0] = 30.0
    with dynamodb_calls() as expired:
        store.home_feed("U100", 50, None)
    # then
    assert (first.counts()["Query"], cached.counts()["Query"], expired.counts()["Query"]) == (3, 2, 3)


# -- a user's comments (CommentsByUser) -------------------------------------------------------------


def comment_on(api: ApiClient, post_id: str, text: str) -> dict[str, Any]:
    answer = api.post(f"/posts/{post_id}/comments", {"text": text}, headers={"Idempotency-Key": text})
    assert answer.status == 201, answer.text
    comment: dict[str, Any] = answer.json
    return comment


def test_a_users_comments_page_newest_first_one_query_and_one_batch_get_a_page(feed_api: ApiClient) -> None:
    # given: U400 comments on two posts, U500 on one
    first, second = write_post(feed_api, "first"), write_post(feed_api, "second")
    mine = [comment_on(feed_api.as_user("U400"), post["post_id"], f"on {post['text']}") for post in (first, second)]
    comment_on(feed_api.as_user("U500"), first["post_id"], "someone else's")
    # when: anyone reads them, a page of one at a time
    with dynamodb_calls() as calls:
        listed = list(pages(feed_api, "/users/U400/comments", limit=1))
    # then
    assert [c["comment_id"] for page in listed for c in page["items"]] == [c["comment_id"] for c in reversed(mine)]
    assert calls.counts() == {"Query": 2, "BatchGetItem": 2}
    assert feed_api.as_user("U400").get("/users/me/comments").json["items"] == list(reversed(mine))


def test_a_comment_whose_post_is_deleted_leaves_the_users_comments_at_once(feed_api: ApiClient) -> None:
    # given
    kept, deleted = write_post(feed_api, "kept"), write_post(feed_api, "deleted")
    on_kept = comment_on(feed_api.as_user("U400"), kept["post_id"], "on kept")
    comment_on(feed_api.as_user("U400"), deleted["post_id"], "on deleted")
    # when the post is deleted (its comments are removed later, by the stream consumer)
    assert feed_api.delete(f"/posts/{deleted['post_id']}").status == 204
    # then the post's comments are a 404 and the user's list leaves that comment out
    assert feed_api.get(f"/posts/{deleted['post_id']}/comments").status == 404
    assert feed_api.get("/users/U400/comments").json["items"] == [on_kept]


def test_a_users_comments_refuse_a_cursor_of_another_users_list(feed_api: ApiClient) -> None:
    # given
    post = write_post(feed_api, "post")
    for n in range(2):
        comment_on(feed_api.as_user("U400"), post["post_id"], f"comment {n}")
    foreign = feed_api.get("/users/U400/comments", query={"limit": 1}).json["next_cursor"]
    # when / then
    answer = feed_api.get("/users/U500/comments", query={"cursor": foreign})
    assert (answer.status, answer.json["type"].rsplit("/", 1)[-1]) == (400, "invalid-cursor")
