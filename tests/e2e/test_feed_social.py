"""Likes, comments, notifications and the monthly leaderboard over HTTP against `make dev` (DynamoDB
Local behind the local stack): a like storm counted exactly once, toggles that converge, notifications
made once and read through the sparse index, a leaderboard matching a brute-force count."""

import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from itertools import batched
from typing import Any

import boto3
import pytest
import requests

from functions.feed_stream.app import lambda_handler as feed_stream
from local.engines import CALL_TIMEOUT_SCALE
from local.streams import lambda_record, records_as_sent
from shopfeed.feed import items, keys
from shopfeed.platform import clients, dynamo
from tests.conftest import reset_caches
from tests.e2e.conftest import Client, LocalStack
from tests.e2e.test_feed_fanout import eventually, users
from tests.integration.test_feed_stream import FEED_STREAM

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

LIKERS = 1000
BATCH_SIZE = 100  # the feed stream mapping's (template.yaml)


def new_post(author: Client, text: str = "Single-table design") -> str:
    posted = author.post("/posts", json={"text": text}, headers={"Idempotency-Key": uuid.uuid4().hex})
    assert posted.status_code == 201, posted.text
    return str(posted.json()["post_id"])


def likes_count(client: Client, post_id: str) -> int:
    return int(client.get(f"/posts/{post_id}").json()["likes_count"])


def stored_like(stack: LocalStack, post_id: str, user_id: str) -> bool:
    raw = stack.dynamodb().get_item(
        TableName="FeedTable", Key=dynamo.serialize(keys.like(post_id, user_id)), ConsistentRead=True
    )
    return "Item" in raw


def stream_invocations(stack: LocalStack) -> int:
    (poller,) = [p for p in stack.page()["pollers"] if p["function"] == "FeedStreamFunction"]
    return int(poller["stats"]["invocations"])


def scan(stack: LocalStack, **filters: Any) -> list[dict[str, Any]]:
    pages = stack.dynamodb().get_paginator("scan").paginate(TableName="FeedTable", ConsistentRead=True, **filters)
    return [dynamo.deserialize(item) for page in pages for item in page["Items"]]


def counter_writes(stack: LocalStack, post_id: str) -> int:
    """Committed writes of the post's counters: each one is a MODIFY of the post on the stream (nothing
    else modifies a post here)."""
    return sum(record["eventName"] == "MODIFY" for record in stream_records(stack, items.POST, post_id))


def stream_records(stack: LocalStack, entity_type: str, post_id: str) -> list[dict[str, Any]]:
    """The table's stream records of one type for one post, shaped as Lambda hands them over."""
    endpoint = stack.page()["endpoints"]["dynamodb"]
    streams = records_as_sent(
        boto3.client(
            "dynamodbstreams",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )
    )
    arn = stack.dynamodb().describe_table(TableName="FeedTable")["Table"]["LatestStreamArn"]
    found = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")
        position = iterator.get("ShardIterator")
        while position:
            response = streams.get_records(ShardIterator=position)
            if not response["Records"]:
                break
            found += response["Records"]
            position = response.get("NextShardIterator")
    shaped = [lambda_record(record, arn, "us-east-1") for record in found]
    return [
        record
        for record in shaped
        if (image := record["dynamodb"].get("NewImage") or record["dynamodb"].get("OldImage") or {})
        and image.get("entity_type", {}).get("S") == entity_type
        and image.get("post_id", {}).get("S") == post_id
    ]


@pytest.fixture
def in_process_consumer(local_stack: LocalStack, monkeypatch: pytest.MonkeyPatch) -> None:
    """The feed stream consumer run here, against the stack's DynamoDB Local and table."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", local_stack.page()["endpoints"]["dynamodb"])
    monkeypatch.setenv("FEED_TABLE_NAME", "FeedTable")
    # The stack's own functions run with call timeouts scaled for a shared machine; so does this one
    # (at the default ones a batch timed out under load and reported failures).
    monkeypatch.setenv("CALL_TIMEOUT_SCALE", CALL_TIMEOUT_SCALE)
    monkeypatch.setenv("FANOUT_QUEUE_URL", "http://127.0.0.1:1/000000000000/FanoutQueue")  # likes queue nothing
    reset_caches()


def test_a_storm_of_a_thousand_likes_counts_a_thousand_once_however_often_its_batches_come(
    local_stack: LocalStack, in_process_consumer: None
) -> None:
    # given a post
    suffix = uuid.uuid4().hex[:6].upper()
    (author,) = users(local_stack, f"UA{suffix}")
    post_id = new_post(author)
    tokens = [local_stack.token(f"UL{suffix}{n:04d}") for n in range(LIKERS)]
    invocations_before = stream_invocations(local_stack)

    # when a thousand users like it at once over HTTP
    def like(token: str) -> int:
        url = f"{local_stack.url}/posts/{post_id}/likes/me"
        return requests.put(url, headers={"Authorization": f"Bearer {token}"}, timeout=120).status_code

    with ThreadPoolExecutor(max_workers=32) as pool:
        statuses = list(pool.map(like, tokens))

    # then every like is made once, and the count is exactly a thousand once the stream drains
    assert Counter(statuses) == {201: LIKERS}
    assert eventually(lambda: likes_count(author, post_id), lambda n: n == LIKERS) == LIKERS
    writes = counter_writes(local_stack, post_id)
    # the poller counts an invocation once it has returned, after its writes committed: wait for the count
    batches = eventually(lambda: stream_invocations(local_stack) - invocations_before, lambda n: n >= writes)
    assert 0 < writes <= batches, (writes, batches)

    # when every batch of its likes is delivered twice more
    records = stream_records(local_stack, items.LIKE, post_id)
    assert len(records) == LIKERS
    post_key = dynamo.serialize(keys.post(post_id))
    attempts: list[int] = []

    def count_post_writes(params: dict[str, Any], **_: Any) -> None:
        attempts.extend(1 for op in params["TransactItems"] if op.get("Update", {}).get("Key") == post_key)

    events = clients.dynamodb().meta.events
    events.register("provide-client-params.dynamodb.TransactWriteItems", count_post_writes)
    redelivered = 0
    try:
        for _ in range(2):
            for chunk in batched(records, BATCH_SIZE, strict=False):
                assert feed_stream({"Records": list(chunk)}, FEED_STREAM) == {"batchItemFailures": []}
                redelivered += 1
    finally:
        events.unregister("provide-client-params.dynamodb.TransactWriteItems", count_post_writes)
    # then nothing more is counted, and each redelivered batch tried the post's counter once at most
    assert likes_count(author, post_id) == LIKERS
    assert counter_writes(local_stack, post_id) == writes
    assert len(attempts) <= redelivered, (len(attempts), redelivered)


def test_fifty_concurrent_like_and_unlike_toggles_of_one_user_end_with_the_like_and_the_count_agreeing(
    local_stack: LocalStack,
) -> None:
    # given a post and one user toggling a like on it, 50 times at once
    suffix = uuid.uuid4().hex[:6].upper()
    (author,) = users(local_stack, f"UA{suffix}")
    post_id = new_post(author)
    liker = f"UT{suffix}"
    token = local_stack.token(liker)

    def toggle(n: int) -> int:
        method = "PUT" if n % 2 == 0 else "DELETE"
        url = f"{local_stack.url}/posts/{post_id}/likes/me"
        return requests.request(method, url, headers={"Authorization": f"Bearer {token}"}, timeout=60).status_code

    # when
    with ThreadPoolExecutor(max_workers=25) as pool:
        statuses = list(pool.map(toggle, range(50)))

    # then the stored like and the counter agree once the stream drains
    assert set(statuses) <= {200, 201, 204}
    expected = 1 if stored_like(local_stack, post_id, liker) else 0
    assert eventually(lambda: likes_count(author, post_id), lambda n: n == expected) == expected
    listed = author.get(f"/posts/{post_id}/likes").json()["items"]
    assert [like["user_id"] for like in listed] == ([liker] if expected else [])


def test_like_unlike_like_converges_to_one_like_and_a_deleted_post_takes_them_away(local_stack: LocalStack) -> None:
    # given
    suffix = uuid.uuid4().hex[:6].upper()
    author, fan = users(local_stack, f"UA{suffix}", f"UB{suffix}")
    post_id = new_post(author)
    # when
    assert fan.put(f"/posts/{post_id}/likes/me").status_code == 201
    assert fan.put(f"/posts/{post_id}/likes/me").status_code == 200
    assert fan.delete(f"/posts/{post_id}/likes/me").status_code == 204
    assert fan.put(f"/posts/{post_id}/likes/me").status_code == 201
    commented = fan.post(f"/posts/{post_id}/comments", json={"text": "nice"}, headers={"Idempotency-Key": suffix})
    # then
    assert commented.status_code == 201, commented.text
    assert [like["user_id"] for like in author.get(f"/posts/{post_id}/likes").json()["items"]] == [f"UB{suffix}"]
    assert eventually(lambda: likes_count(author, post_id), lambda n: n == 1) == 1

    # when the post is deleted, then its likes and comments are unreachable at once, and removed later
    assert author.delete(f"/posts/{post_id}").status_code == 204
    assert fan.get(f"/posts/{post_id}/likes").status_code == 404
    assert fan.get(f"/posts/{post_id}/comments").status_code == 404
    assert fan.put(f"/posts/{post_id}/likes/me").status_code == 404
    left = eventually(
        lambda: local_stack.dynamodb().query(
            TableName="FeedTable",
            KeyConditionExpression="PK = :post",
            ExpressionAttributeValues={":post": {"S": keys.post_partition(post_id)}},
            ConsistentRead=True,
        )["Items"],
        lambda found: not found,
    )
    assert left == []


def unread_ids(client: Client) -> list[str]:
    answer = client.get("/notifications", params={"unread": "true"})
    assert answer.status_code == 200, answer.text
    return [n["notification_id"] for n in answer.json()["items"]]


def test_follows_and_comments_notify_once_each_and_a_read_one_leaves_the_unread_list(
    local_stack: LocalStack,
) -> None:
    # given an author, two followers, and a comment from one of them
    suffix = uuid.uuid4().hex[:6].upper()
    author, first, second = users(local_stack, f"UA{suffix}", f"UB{suffix}", f"UC{suffix}")
    post_id = new_post(author)
    assert first.put(f"/users/UA{suffix}/followers/me").status_code == 201
    assert second.put(f"/users/UA{suffix}/followers/me").status_code == 201
    key = {"Idempotency-Key": suffix}
    assert first.post(f"/posts/{post_id}/comments", json={"text": "great"}, headers=key).status_code == 201
    assert first.post(f"/posts/{post_id}/comments", json={"text": "great"}, headers=key).status_code == 201
    assert author.put(f"/posts/{post_id}/likes/me").status_code == 201  # own post: notifies nobody

    # when the stream drains
    unread = eventually(lambda: unread_ids(author), lambda found: len(found) >= 3)

    # then one notification per follow and per comment, newest first, none for the own like
    listed = author.get("/notifications").json()["items"]
    assert sorted(n["kind"] for n in listed) == ["comment", "follow", "follow"]
    assert unread == [n["notification_id"] for n in listed] == sorted(unread, reverse=True)

    # when one is read, then the unread list never shows it again, while "all" still does
    read = author.post(f"/notifications/{unread[0]}/read")
    assert read.status_code == 200, read.text
    assert read.json()["read_at"]
    assert unread_ids(author) == unread[1:]
    assert [n["notification_id"] for n in author.get("/notifications").json()["items"]] == unread
    # and marking all read empties the unread list
    assert author.post("/notifications/read").json() == {"marked": 2}
    assert unread_ids(author) == []
    # and another user cannot read them
    assert first.post(f"/notifications/{unread[1]}/read").status_code == 404


def test_the_leaderboard_of_the_month_matches_a_brute_force_count_over_the_follow_edges(
    local_stack: LocalStack,
) -> None:
    # given a seeded month of follows (some taken back)
    suffix = uuid.uuid4().hex[:6].upper()
    authors = users(local_stack, *(f"UA{suffix}{n}" for n in range(4)))
    fans = users(local_stack, *(f"UF{suffix}{n}" for n in range(6)))
    for n, fan in enumerate(fans):
        for author_number in range(n % 4 + 1):
            assert fan.put(f"/users/UA{suffix}{author_number}/followers/me").status_code == 201
    assert fans[0].delete(f"/users/UA{suffix}0/followers/me").status_code == 204
    assert fans[1].delete(f"/users/UA{suffix}1/followers/me").status_code == 204
    ops = Client(local_stack, local_stack.token(f"UO{suffix}", "ops"))
    edges = scan(
        local_stack,
        FilterExpression="entity_type = :follow",
        ExpressionAttributeValues={":follow": {"S": items.FOLLOW}},
    )
    month = max(edge["followed_at"] for edge in edges)[:7]

    # when the stream drains, then the leaderboard is the brute-force count of the month's edges
    def brute_force() -> list[dict[str, Any]]:
        edges = scan(
            local_stack,
            FilterExpression="entity_type = :follow",
            ExpressionAttributeValues={":follow": {"S": items.FOLLOW}},
        )
        gained = Counter(edge["followee_id"] for edge in edges if edge["followed_at"].startswith(month))
        ranked = sorted(gained.items(), key=lambda pair: (-pair[1], pair[0]))[:100]
        return [{"author_id": author, "gained": n} for author, n in ranked]

    def board() -> list[dict[str, Any]]:
        answer = ops.get("/leaderboards/authors", params={"month": month})
        assert answer.status_code == 200, answer.text
        return list(answer.json()["items"])

    assert eventually(board, lambda found: found == brute_force()) == brute_force()
    ours = [entry for entry in board() if entry["author_id"].startswith(f"UA{suffix}")]
    assert ours == [
        {"author_id": f"UA{suffix}0", "gained": 5},
        {"author_id": f"UA{suffix}1", "gained": 3},
        {"author_id": f"UA{suffix}2", "gained": 2},
        {"author_id": f"UA{suffix}3", "gained": 1},
    ]
    # and it is for ops only
    assert authors[0].get("/leaderboards/authors", params={"month": month}).status_code == 403


def test_the_seed_likes_and_comments_the_playbooks_post_and_notifies_its_author(local_stack: LocalStack) -> None:
    # given the seeded users
    u100 = Client(local_stack, local_stack.token("U100"))
    (seeded,) = [p for p in u100.get("/users/U100/posts").json()["items"] if p["tags"] == ["dynamodb"]]
    post_id = seeded["post_id"]
    # then the playbook's post has its likes (newest first), its comment and, once counted, its counters
    assert [like["user_id"] for like in u100.get(f"/posts/{post_id}/likes").json()["items"]] == ["U200", "U400"]
    assert [c["text"] for c in u100.get(f"/posts/{post_id}/comments").json()["items"]] == ["Keys second, indeed."]
    counted = eventually(lambda: u100.get(f"/posts/{post_id}").json(), lambda p: p["likes_count"] == 2)
    assert (counted["likes_count"], counted["comments_count"]) == (2, 1)
    # and its author has unread notifications: two follows, the likes collapsed into one, the comment
    unread = eventually(lambda: u100.get("/notifications?unread=true").json()["items"], lambda n: len(n) >= 4)
    assert sorted((n["kind"], n["count"]) for n in unread) == [
        ("comment", 1),
        ("follow", 1),
        ("follow", 1),
        ("likes", 2),
    ]
