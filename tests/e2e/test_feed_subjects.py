"""Any subject the API accepts works across the whole feed, stream consumer and fanout included, on
DynamoDB Local (which enforces DynamoDB's key sizes: 2,048 bytes of partition key, 1,024 of sort key).

A subject is accepted up to 255 bytes of UTF-8 (every OpenID Connect subject fits); each feed key that
carries a user id must hold the longest ones, and a longer one is refused before anything is written."""

import uuid
from urllib.parse import quote

import pytest

from tests.e2e.conftest import Client, LocalStack
from tests.e2e.test_feed_fanout import counts, eventually, feed_of

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

LONGEST = "\U0001f600" * 63 + "%#|"  # 255 bytes of UTF-8, with the key separators and the escape character
HASHES = "#" * 255


def register(stack: LocalStack, subject: str) -> Client:
    client = Client(stack, stack.token(subject))
    answer = client.post("/users", json={"email": f"{uuid.uuid4().hex}@example.com", "name": "Long Name"})
    assert answer.status_code == 201, answer.text
    return client


@pytest.mark.parametrize("subject", [LONGEST, HASHES], ids=["255 bytes of four-byte characters", "255 hashes"])
def test_a_user_with_any_accepted_subject_follows_posts_likes_comments_and_is_counted(
    local_stack: LocalStack, subject: str
) -> None:
    # given
    me = register(local_stack, subject)
    friend_id = f"U-FRIEND-{uuid.uuid4().hex[:8]}"
    friend = register(local_stack, friend_id)

    # when: both directions of a follow, a post each way, a like and a comment
    followed = me.put(f"/users/{friend_id}/followers/me")
    followed_back = friend.put(f"/users/{quote(subject, safe='')}/followers/me")
    mine = me.post("/posts", json={"text": "From a long name."}, headers={"Idempotency-Key": "k#1"})
    theirs = friend.post("/posts", json={"text": "Hello."}, headers={"Idempotency-Key": "k#1"})
    assert (followed.status_code, followed_back.status_code) == (201, 201), (followed.text, followed_back.text)
    assert (mine.status_code, theirs.status_code) == (201, 201), (mine.text, theirs.text)
    liked = me.put(f"/posts/{theirs.json()['post_id']}/likes/me")
    commented = me.post(
        f"/posts/{theirs.json()['post_id']}/comments", json={"text": "Nice."}, headers={"Idempotency-Key": "c"}
    )

    # then: every write was taken, and the stream consumer and the fanout worker kept up with them
    assert (liked.status_code, commented.status_code) == (201, 201), (liked.text, commented.text)
    assert eventually(lambda: counts(local_stack, subject), lambda c: c == (1, 1, 1)) == (1, 1, 1)
    assert eventually(lambda: feed_of(friend), lambda f: mine.json()["post_id"] in f) == [mine.json()["post_id"]]
    assert eventually(lambda: feed_of(me), lambda f: theirs.json()["post_id"] in f) == [theirs.json()["post_id"]]
    likes = me.get(f"/posts/{theirs.json()['post_id']}/likes").json()["items"]
    assert [like["user_id"] for like in likes] == [subject]
    followers = friend.get(f"/users/{friend_id}/followers").json()["items"]
    assert [f["follower_id"] for f in followers] == [subject]
    unread = eventually(
        lambda: friend.get("/notifications", params={"unread": "true"}).json()["items"],
        lambda found: len(found) == 3,
    )
    assert sorted(n["kind"] for n in unread) == ["comment", "follow", "likes"]
    assert {n["actor_id"] for n in unread} == {subject}


def test_a_subject_past_255_bytes_is_refused_with_a_problem_and_writes_nothing(local_stack: LocalStack) -> None:
    # given: 64 four-byte characters, 256 bytes
    too_long = Client(local_stack, local_stack.token("\U0001f600" * 64))

    # when
    registered = too_long.post("/users", json={"email": "too-long@example.com", "name": "Too Long"})
    followed = too_long.put("/users/U100/followers/me")

    # then
    assert (registered.status_code, followed.status_code) == (403, 403)
    assert registered.headers["Content-Type"] == "application/problem+json"
    assert registered.json()["type"].endswith("/unusable-subject")
