"""The feed over HTTP through the local stack: posts, follows, fanout through the queue, the celebrity
merge, and the refusals (another's post, bad cursors, malformed bodies)."""

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from local.harness.feed_builders import profile
from shopfeed.feed import items, keys
from shopfeed.platform import dynamo
from tests.e2e.conftest import EVENT_TIMEOUT_S, Client, LocalStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

CELEBRITY_FOLLOWERS = 25_000  # the template's default CelebrityFollowerThreshold


class People:
    """Users of this test only (the stack is shared by the session), each with a social profile."""

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        self.table = stack.page()["resources"]["FeedTable"]["name"]
        self.suffix = uuid.uuid4().hex[:8]

    def user(self, name: str, followers: int = 0) -> tuple[str, Client]:
        user_id = f"{name}-{self.suffix}"
        item = items.profile_item(profile(user_id, handle=f"{name.lower()}_{self.suffix}", followers=followers))
        self.stack.dynamodb().put_item(TableName=self.table, Item=dynamo.serialize(item))
        return user_id, Client(self.stack, self.stack.token(user_id))

    def set_followers(self, user_id: str, count: int) -> None:
        self.stack.dynamodb().update_item(
            TableName=self.table,
            Key=dynamo.serialize(keys.profile(user_id)),
            UpdateExpression="SET followers_count = :n",
            ExpressionAttributeValues={":n": dynamo.value(count)},
        )


@pytest.fixture
def people(local_stack: LocalStack) -> People:
    return People(local_stack)


def write(client: Client, text: str, *tags: str) -> dict[str, Any]:
    body = {"text": text, "tags": list(tags)}
    answer = client.post("/posts", json=body, headers={"Idempotency-Key": str(uuid.uuid4())})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def eventually[T](read: Callable[[], T], done: Callable[[T], bool]) -> T:
    """``read()`` again until ``done`` says so or the timeout passes (the fanout is asynchronous)."""
    deadline = time.monotonic() + EVENT_TIMEOUT_S
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def feed_ids(client: Client, **query: Any) -> list[str]:
    ids, cursor = [], None
    while True:
        page = client.get("/feed", params={**query, "cursor": cursor}).json()
        ids += [post["post_id"] for post in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return ids


def test_a_post_reaches_a_followers_feed_through_the_fanout_queue(people: People) -> None:
    # given
    author_id, author = people.user("Author")
    _, follower = people.user("Follower")
    assert follower.put(f"/users/{author_id}/followers/me").status_code == 201
    # when
    post = write(author, "hello followers", "#DynamoDB")
    # then
    assert post["tags"] == ["dynamodb"]
    delivered = eventually(lambda: feed_ids(follower), lambda ids: ids == [post["post_id"]])
    assert delivered == [post["post_id"]], people.stack.log_tail()
    assert follower.get(f"/posts/{post['post_id']}").json() == post
    assert [p["post_id"] for p in author.get(f"/users/{author_id}/posts").json()["items"]] == [post["post_id"]]


def test_a_celebritys_post_appears_through_the_merge_in_order(people: People) -> None:
    # given: a follower of a fanned-out author and of a celebrity
    author_id, author = people.user("Author")
    celebrity_id, celebrity = people.user("Celebrity", followers=CELEBRITY_FOLLOWERS)
    _, follower = people.user("Follower")
    for followed in (author_id, celebrity_id):
        assert follower.put(f"/users/{followed}/followers/me").status_code == 201
    people.set_followers(celebrity_id, CELEBRITY_FOLLOWERS)  # whatever the counters made of the follow
    # when
    fanned = write(author, "fanned out")
    pulled = write(celebrity, "merged at read time")
    later = write(author, "fanned out later")
    # then
    expected = [later["post_id"], pulled["post_id"], fanned["post_id"]]
    assert eventually(lambda: feed_ids(follower, limit=1), lambda ids: ids == expected) == expected


def test_deleting_a_post_is_for_its_author_and_takes_it_out_of_feeds(people: People) -> None:
    # given
    author_id, author = people.user("Author")
    _, follower = people.user("Follower")
    follower.put(f"/users/{author_id}/followers/me")
    post = write(author, "soon gone")
    eventually(lambda: feed_ids(follower), lambda ids: ids == [post["post_id"]])
    # when / then
    assert follower.delete(f"/posts/{post['post_id']}").status_code == 403
    assert author.delete(f"/posts/{post['post_id']}").status_code == 204
    assert follower.get(f"/posts/{post['post_id']}").status_code == 404
    assert feed_ids(follower) == []


def test_bad_cursors_and_malformed_bodies_are_refused(people: People) -> None:
    # given
    _, user = people.user("User")
    # then
    assert user.get("/feed", params={"cursor": "not-a-cursor"}).status_code == 400
    assert user.get("/tags/dynamodb/posts", params={"cursor": "e30.AAAA"}).status_code == 400
    refused = user.post("/posts", json={"text": "", "tags": ["a b"]}, headers={"Idempotency-Key": "k"})
    assert refused.status_code == 422
    assert refused.headers["content-type"] == "application/problem+json"
    assert user.get("/users/me/posts").json()["items"] == []


def test_the_playbooks_feed_sample_is_seeded_through_the_api(local_stack: LocalStack) -> None:
    # given the seeded users' tokens
    u100, u400 = (Client(local_stack, local_stack.token(user)) for user in ("U100", "U400"))
    # then U100 has a social profile, U400 follows U100, and U100's post abc123 tagged dynamodb is in U400's feed
    assert u400.get("/users/U100").json()["handle"] == "u100"
    assert "U400" in [f["follower_id"] for f in u100.get("/users/U100/followers").json()["items"]]
    by_u100 = u100.get("/users/U100/posts").json()["items"]
    assert [p["tags"] for p in by_u100] == [["dynamodb"]]
    assert eventually(lambda: feed_ids(u400), lambda ids: by_u100[0]["post_id"] in ids)
    tagged = [p["post_id"] for p in u100.get("/tags/dynamodb/posts").json()["items"]]
    assert by_u100[0]["post_id"] in tagged
