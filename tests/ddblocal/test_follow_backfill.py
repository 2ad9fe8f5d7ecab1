"""Follow backfill and unfollow cleanup racing posts and each other on DynamoDB Local, one container
(process) per request or worker invocation, all released together (local.harness.race).

Each race ends with what the table holds checked against what the final follow edges say: whatever
the interleaving, every follower's feed holds exactly the author's backfilled and fanned-out posts,
and an unfollowed one none. Every task is then delivered once more: nothing changes.
"""

from datetime import timedelta

import pytest

from local.harness import feed_builders
from local.harness.client import LambdaContext
from local.harness.fanout import FanoutLine, follow, put_post
from local.harness.feed_seed import register_profiles
from local.harness.race import Call, Invoke, in_containers
from shopfeed.feed import items, keys
from shopfeed.feed.home.backfill import FollowAction, FollowTask
from shopfeed.feed.home.fanout import FanoutAction, FanoutTask
from shopfeed.feed.models import Post
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import utc_now
from tests.conftest import reset_caches

pytestmark = [pytest.mark.ddblocal, pytest.mark.xdist_group(__name__)]

AUTHOR = "U100"
BACKFILL = 20  # the setting's default


@pytest.fixture
def table(tables: dict[str, str], sqs_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", sqs_endpoint)
    reset_caches()
    monkeypatch.setenv("FANOUT_QUEUE_URL", FanoutLine.create().url)
    reset_caches()
    return tables["FeedTable"]


def posts_of_author(table: str, count: int) -> list[Post]:
    """``count`` fanned-out posts of the author, a minute apart going back from now, newest first; their
    fanout not run yet."""
    now = utc_now()
    posts = [feed_builders.post(AUTHOR, at=now - timedelta(minutes=n)) for n in range(count)]
    for post in posts:
        put_post(table, post)
    return posts


# A message settling a follower nobody races on. Every worker batch here carries it beside the message
# under test: Powertools raises when every record of a batch fails (Lambda then retries the whole
# batch), which a container would report as a crash instead of a failed message the queue gives back.
BYSTANDER = FollowTask(action=FollowAction.CLEANUP, follower_id="U999", author_id=AUTHOR).model_dump_json()


def worker(body: str) -> Invoke:
    """The fanout worker handed this message (and the bystander), as its SQS mapping would."""
    records = [
        {"messageId": message_id, "receiptHandle": "r", "body": body, "attributes": {}, "eventSource": "aws:sqs"}
        for message_id, body in (("m0", body), ("bystander", BYSTANDER))
    ]
    return Invoke("FanoutWorkerFunction", {"Records": records})


def fan_out(post: Post) -> Invoke:
    return worker(FanoutTask(action=FanoutAction.ADD, entry=items.entry_of(post)).model_dump_json())


def settle(action: FollowAction, follower: str) -> Invoke:
    return worker(FollowTask(action=action, follower_id=follower, author_id=AUTHOR).model_dump_json())


def follow_call(follower: str) -> Call:
    return Call("PUT", f"/users/{AUTHOR}/followers/me", sub=follower)


def unfollow_call(follower: str) -> Call:
    return Call("DELETE", f"/users/{AUTHOR}/followers/me", sub=follower)


def race(shares: list[list[Call | Invoke]]) -> None:
    """Run the shares, each in its own container, all at once; every request must succeed. A worker
    message that failed (its edge kept changing under it) comes back, as the queue would give it back,
    until it succeeds."""
    failed: list[Invoke] = []
    for served, share in zip(in_containers(shares, warm_up=Call("GET", f"/users/{AUTHOR}")), shares, strict=True):
        for one, call in zip(served, share, strict=True):
            assert one.answer.status in (200, 201, 204), one.answer.text
            if isinstance(call, Invoke) and one.answer.json["batchItemFailures"]:
                assert one.answer.json["batchItemFailures"] == [{"itemIdentifier": "m0"}]
                failed.append(call)
    for call in failed:
        deliver(call)


def deliver(call: Invoke) -> None:
    """One worker invocation here, which must succeed (nothing races it any more)."""
    from functions.fanout_worker.app import lambda_handler

    answer = lambda_handler(dict(call.event), LambdaContext(function_name=call.function))
    assert answer == {"batchItemFailures": []}


def again(shares: list[list[Call | Invoke]]) -> None:
    """Every worker invocation of the race delivered once more, one after another (redelivery)."""
    for share in shares:
        for call in share:
            if isinstance(call, Invoke):
                deliver(call)


def feed_post_ids(table: str, user_id: str) -> list[str]:
    """The post ids of the user's feed, newest first (strongly consistent)."""
    response = clients.dynamodb().query(
        TableName=table,
        KeyConditionExpression="PK = :feed",
        ExpressionAttributeValues={":feed": dynamo.value(keys.feed_partition(user_id))},
        ConsistentRead=True,
        ScanIndexForward=False,
    )
    return [str(dynamo.deserialize(item)["post_id"]) for item in response["Items"]]


def ids(posts: list[Post]) -> list[str]:
    return [post.post_id for post in posts]


def test_follows_racing_posts_by_the_same_author_give_every_new_follower_every_post_once(table: str) -> None:
    # given the author's three new posts, their fanout not run, and three users about to follow
    followers = ["U201", "U202", "U203"]
    register_profiles(AUTHOR, *followers)
    posts = posts_of_author(table, 3)
    # when each post's fanout races a follow followed by its backfill (the follow's stream record's task)
    shares: list[list[Call | Invoke]] = [[fan_out(post)] for post in posts]
    shares += [[follow_call(f), settle(FollowAction.BACKFILL, f)] for f in followers]
    race(shares)
    # then each follower's feed holds each post once, by the fanout or by the backfill
    assert {f: feed_post_ids(table, f) for f in followers} == {f: ids(posts) for f in followers}
    # and every task delivered again changes nothing
    again(shares)
    assert {f: feed_post_ids(table, f) for f in followers} == {f: ids(posts) for f in followers}


def test_unfollows_racing_posts_by_the_same_author_leave_none_of_them_in_the_leavers_feeds(table: str) -> None:
    # given three followers about to leave and one who stays; the author's three new posts not fanned out
    leaving, staying = ["U201", "U202", "U203"], "U299"
    register_profiles(AUTHOR, staying, *leaving)
    for user in (staying, *leaving):
        follow(table, user, AUTHOR)
    posts = posts_of_author(table, 3)
    # when each post's fanout races an unfollow followed by its cleanup
    shares: list[list[Call | Invoke]] = [[fan_out(post)] for post in posts]
    shares += [[unfollow_call(f), settle(FollowAction.CLEANUP, f)] for f in leaving]
    race(shares)
    # then no post survives in a leaver's feed, and the one who stayed has them all
    assert {f: feed_post_ids(table, f) for f in leaving} == {f: [] for f in leaving}
    assert feed_post_ids(table, staying) == ids(posts)
    again(shares)
    assert {f: feed_post_ids(table, f) for f in leaving} == {f: [] for f in leaving}
    assert feed_post_ids(table, staying) == ids(posts)


@pytest.mark.parametrize("ends_following", [True, False], ids=["follow-unfollow-follow", "…-unfollow"])
def test_a_follow_unfollow_follow_sequence_racing_its_own_tasks_out_of_order_ends_as_the_last_edge_says(
    table: str, ends_following: bool
) -> None:
    # given the author's 25 posts (fanned out before anyone followed) and a new post whose fanout runs now
    register_profiles(AUTHOR, "U200")
    older = posts_of_author(table, 25)
    (newest,) = [feed_builders.post(AUTHOR, at=utc_now() + timedelta(minutes=1))]
    put_post(table, newest)
    changes = [follow_call("U200"), unfollow_call("U200"), follow_call("U200")]
    changes += [] if ends_following else [unfollow_call("U200")]
    tasks = [settle(FollowAction.BACKFILL if c.method == "PUT" else FollowAction.CLEANUP, "U200") for c in changes]
    # when one container changes the edge, each change followed by its task (as its stream record's task
    # starts after it), while three others deliver the same tasks again, late and out of order, and the
    # new post is fanned out
    edge_changer: list[Call | Invoke] = [step for pair in zip(changes, tasks, strict=True) for step in pair]
    shares: list[list[Call | Invoke]] = [
        edge_changer,
        tasks[::-1],
        tasks[1:] + tasks[:1],
        [fan_out(newest), *tasks[::2]],
    ]
    race(shares)
    # then the feed says what the last edge says: the 20 newest posts, or nothing
    expected = ids([newest, *older])[:BACKFILL] if ends_following else []
    assert feed_post_ids(table, "U200") == expected
    # and delivering every task once more (the stale ones included) changes nothing
    again(shares)
    assert feed_post_ids(table, "U200") == expected
