"""The feed API's HTTP edge with the real routers and the in-memory store injected (Powertools Depends).

Status codes, problem+json, validation, authorisation and paging, without any AWS.
"""

from typing import Any

import pytest
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from local.harness.client import Answer, ApiClient
from local.harness.feed_builders import profile
from local.harness.feed_factories import every_item, follow, post_body, write_post
from shopfeed.feed.bootstrap import celebrity_threshold, feed_store
from shopfeed.feed.routes import follows, home, posts
from shopfeed.platform.http import build_resolver
from shopfeed.platform.idempotency import REPLAYED_HEADER
from shopfeed.platform.problems import PROBLEM_JSON
from tests.unit.feed_fakes import InMemoryFeed

THRESHOLD = 2


@pytest.fixture
def store() -> InMemoryFeed:
    fake = InMemoryFeed()
    for user_id in ("U100", "U400", "U500"):
        fake.add_profile(profile(user_id))
    return fake


@pytest.fixture
def api(store: InMemoryFeed) -> ApiClient:
    app: APIGatewayHttpResolver = build_resolver(posts.router, follows.router, home.router)
    app.dependency_overrides[feed_store] = lambda: store
    app.dependency_overrides[celebrity_threshold] = lambda: THRESHOLD
    return ApiClient(lambda event, context: app.resolve(event, context), sub="U100")


def problem(answer: Answer, status: int) -> dict[str, Any]:
    assert (answer.status, answer.content_type) == (status, PROBLEM_JSON), answer.text
    body: dict[str, Any] = answer.json
    assert body["status"] == status
    return body


def test_a_post_is_created_with_its_tags_normalised_and_read_back(api: ApiClient) -> None:
    # when
    answer = api.post("/posts", post_body("hello", "#DynamoDB", "aws", "dynamodb"), headers={"Idempotency-Key": "k1"})
    # then
    assert answer.status == 201, answer.text
    created = answer.json
    assert created["tags"] == ["dynamodb", "aws"]
    assert answer.headers["Location"] == f"/posts/{created['post_id']}"
    assert api.get(f"/posts/{created['post_id']}").json == created
    assert (created["likes_count"], created["comments_count"]) == (0, 0)
    assert "delivery" not in created


def test_a_retried_post_answers_the_first_response_marked_as_replayed(api: ApiClient) -> None:
    # given
    first = api.post("/posts", post_body("hello"), headers={"Idempotency-Key": "k1"})
    # when
    again = api.post("/posts", post_body("hello"), headers={"Idempotency-Key": "k1"})
    # then
    assert (again.status, again.json) == (201, first.json)
    assert again.headers[REPLAYED_HEADER] == "true"


def test_a_post_without_an_idempotency_key_is_400_and_writes_nothing(api: ApiClient, store: InMemoryFeed) -> None:
    problem(api.post("/posts", post_body("hello")), 400)
    assert store.list_posts_of_author("U100", 50, None).items == []


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"text": ""}, id="empty-text"),
        pytest.param({"text": "x" * 2001}, id="text-too-long"),
        pytest.param({"text": "hi", "tags": [f"t{n}" for n in range(11)]}, id="eleven-tags"),
        pytest.param({"text": "hi", "tags": ["no spaces"]}, id="tag-with-a-space"),
        pytest.param({"text": "hi", "tags": [7]}, id="tag-not-a-string"),
        pytest.param({"text": "hi", "author_id": "U400"}, id="unknown-field"),
        pytest.param({"tags": ["aws"]}, id="no-text"),
        pytest.param({"text": "hi\u0000there"}, id="nul-in-text"),
        pytest.param({"text": "pay \u202eexe.pdf"}, id="bidi-override-in-text"),
        pytest.param({"text": "\u200b"}, id="invisible-text"),
    ],
)
def test_a_malformed_post_is_422_and_writes_nothing(api: ApiClient, store: InMemoryFeed, body: dict[str, Any]) -> None:
    # when
    answer = api.post("/posts", body, headers={"Idempotency-Key": "k1"})
    # then
    assert problem(answer, 422)["errors"]
    assert store.list_posts_of_author("U100", 50, None).items == []


def test_deleting_another_users_post_is_403_and_keeps_it(api: ApiClient) -> None:
    # given
    post = write_post(api, "mine")
    # when
    answer = api.as_user("U400").delete(f"/posts/{post['post_id']}")
    # then
    problem(answer, 403)
    assert api.get(f"/posts/{post['post_id']}").status == 200


def test_the_author_deletes_a_post_once(api: ApiClient) -> None:
    # given
    post = write_post(api, "mine")
    # when
    first, again = api.delete(f"/posts/{post['post_id']}"), api.delete(f"/posts/{post['post_id']}")
    # then
    assert (first.status, first.text) == (204, "")
    problem(again, 404)
    problem(api.get(f"/posts/{post['post_id']}"), 404)


def test_a_post_id_that_is_not_a_ulid_is_422(api: ApiClient) -> None:
    problem(api.get("/posts/not-a-ulid"), 422)


def test_following_is_201_then_200_with_the_same_edge(api: ApiClient) -> None:
    # when
    first, again = api.put("/users/U400/followers/me"), api.put("/users/U400/followers/me")
    # then
    assert (first.status, again.status) == (201, 200)
    assert again.json == first.json == {**first.json, "follower_id": "U100", "followee_id": "U400"}
    assert every_item(api, "/users/U400/followers") == [first.json]
    assert every_item(api, "/users/me/following") == [first.json]


def test_following_myself_is_422_and_an_unknown_user_404(api: ApiClient) -> None:
    problem(api.put("/users/U100/followers/me"), 422)
    problem(api.put("/users/U999/followers/me"), 404)


def test_unfollowing_is_204_even_when_not_following(api: ApiClient) -> None:
    # given
    follow(api, "U400")
    # when
    first, again = api.delete("/users/U400/followers/me"), api.delete("/users/U400/followers/me")
    # then
    assert (first.status, again.status) == (204, 204)
    assert every_item(api, "/users/U400/followers") == []


def test_the_home_feed_pages_through_fanned_out_and_pulled_posts(api: ApiClient, store: InMemoryFeed) -> None:
    # given: U100 follows U400 (fanned out) and U500 (a celebrity)
    follow(api, "U400")
    follow(api, "U500")
    store.count_followers("U500", THRESHOLD)
    written = []
    for n in range(5):
        author = api.as_user("U500" if n % 2 else "U400")
        post = write_post(author, f"post {n}")
        store.fan_out(store.get_post(post["post_id"]))  # type: ignore[arg-type]
        written.append(post)
    # when
    feed = every_item(api, "/feed", limit=2)
    # then
    newest_first = sorted(written, key=lambda p: (p["created_at"], p["post_id"]), reverse=True)
    assert feed == newest_first


@pytest.mark.parametrize("path", ["/feed", "/users/U400/posts", "/tags/aws/posts", "/users/U400/followers"])
def test_a_forged_cursor_is_400(api: ApiClient, path: str) -> None:
    problem(api.get(path, query={"cursor": "eyJzIjoiZmVlZCJ9.AAAA"}), 400)


@pytest.mark.parametrize(
    ("path", "limit"),
    [("/feed", 51), ("/users/U400/posts", 51), ("/tags/aws/posts", 201), ("/users/U400/followers", 501)],
)
def test_a_page_size_above_the_patterns_limit_is_422(api: ApiClient, path: str, limit: int) -> None:
    problem(api.get(path, query={"limit": limit}), 422)


def test_a_tag_in_the_path_is_normalised_like_a_tag_in_a_post(api: ApiClient) -> None:
    # given
    post = write_post(api, "hello", "DynamoDB")
    # when
    found = every_item(api, "/tags/DynamoDB/posts")
    # then
    assert [p["post_id"] for p in found] == [post["post_id"]]


def test_every_feed_route_refuses_an_anonymous_caller(api: ApiClient) -> None:
    anonymous = api.as_user(None)
    for answer in (
        anonymous.get("/feed"),
        anonymous.post("/posts", post_body(), headers={"Idempotency-Key": "k"}),
        anonymous.put("/users/U400/followers/me"),
    ):
        problem(answer, 401)
