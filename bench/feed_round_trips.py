"""DynamoDB round trips and consumed capacity per feed endpoint, against DynamoDB Local.

The same measurement as the commerce table, through the feed API's handler. The data is made the way
production makes it: users register and follow through the APIs, the FeedTable stream is delivered to
the feed consumer with the template's event source mapping (counters, notifications, leaderboard, fanout
tasks) and the fanout queue to the worker, so every list reads items its real writers wrote.
"""

import json
import os
from datetime import UTC, datetime

from bench.markdown import table
from bench.meter import Meter
from bench.round_trips import Recorder, RoundTrips
from bench.stack import Stack, moto_sqs
from local.harness.client import Answer, LambdaContext
from local.harness.factories import idempotency_key, register_user
from local.harness.fanout import FanoutLine
from local.harness.feed_factories import follow, write_post
from local.harness.feed_seed import feed_table, set_followers_count
from local.harness.feed_stream import deliver_all, feed_stream_poller
from shopfeed.feed.home.backfill import FollowAction, FollowTask
from shopfeed.feed.settings import FanoutSettings, FeedSettings
from shopfeed.platform.config import settings

# Costs this benchmark measured before and after a change, kept in the report a re-run writes (the
# table above it shows only the present): (change, route and case, before, after).
_EVENTUAL = "feed reads eventual, posts projected (2026-11-26)"
_TOGETHER = "mark-all-read: one transaction per 100 (2026-11-26)"
_CHANGES = [
    (_EVENTUAL, "`GET /feed` (first page, one celebrity followed)", "53.5 RCU", "28 RCU"),
    (_EVENTUAL, "`GET /feed` (next page)", "15.5 RCU", "8 RCU"),
    (_TOGETHER, "`POST /notifications/read` (24 unread)", "25 round trips, 48 WCU", "2 round trips, 72 WCU †"),
]
CHANGES = "\n".join(
    [
        "Changes measured by this benchmark (before → after, the same data, DynamoDB Local):",
        "",
        table(["change", "route (case)", "before", "after"], [list(row) for row in _CHANGES], "llrr"),
        "",
        "† 48 WCU for the table (a transactional write costs 2 per KB) and 24 for the index entries the "
        "updates remove, which DynamoDB bills and DynamoDB Local under-reports inside a transaction (the "
        "row above shows its 2). The trade and why: `docs/data-model.md`, decisions.",
    ]
)

FUNCTION = "FeedApiFunction"
AUTHOR = "U-BENCH-AUTHOR"
READER = "U-BENCH-READER"
CELEBRITY = "U-BENCH-CELEB"
FANS = 20
POSTS = 60
CELEBRITY_POSTS = 5
TAG = "bench"
BACKFILL = FanoutSettings.model_fields["follow_backfill_posts"].default


def _settled(action: FollowAction, follower: str) -> Answer:
    """The fanout worker handed the follow task its stream record queues, as its SQS mapping does."""
    from functions.fanout_worker.app import lambda_handler

    body = FollowTask(action=action, follower_id=follower, author_id=AUTHOR).model_dump_json()
    event = {"Records": [{"messageId": "bench", "receiptHandle": "bench", "body": body, "attributes": {}}]}
    result = lambda_handler(event, LambdaContext(function_name="FanoutWorkerFunction"))
    return Answer(200, {}, json.dumps(result))


def measure(stack: Stack) -> RoundTrips:
    with moto_sqs():
        return _measure(stack)


def _measure(stack: Stack) -> RoundTrips:
    users, feed = stack.api, stack.feed_api
    author, reader, celebrity = feed.as_user(AUTHOR), feed.as_user(READER), feed.as_user(CELEBRITY)
    ops = feed.as_user("U-BENCH-FEED-OPS", "ops")
    fans = [feed.as_user(f"U-BENCH-FAN-{n:02d}") for n in range(FANS)]
    newcomer = feed.as_user("U-BENCH-NEWCOMER")

    # Seeded outside the measurements, through the APIs, then the stream and the fanout queue drained.
    line = FanoutLine.create()
    os.environ["FANOUT_QUEUE_URL"] = line.url
    settings.cache_clear()
    poller = feed_stream_poller(feed_table())
    for user in [AUTHOR, READER, CELEBRITY, "U-BENCH-NEWCOMER", *(f"U-BENCH-FAN-{n:02d}" for n in range(FANS))]:
        register_user(users.as_user(user), handle=user.lower().replace("-", "_"))
    for follower in [reader, *fans]:
        follow(follower, AUTHOR)
    follow(reader, CELEBRITY)
    set_followers_count(CELEBRITY, settings(FeedSettings).celebrity_follower_threshold)
    posts = [write_post(author, f"Post {n} on access patterns.", TAG) for n in range(POSTS)]
    for n in range(CELEBRITY_POSTS):
        write_post(celebrity, f"Celebrity post {n}.", TAG)
    liked = posts[-1]["post_id"]
    for fan in fans:
        fan.put(f"/posts/{liked}/likes/me")
    for fan in fans[:3]:
        fan.post(f"/posts/{liked}/comments", {"text": "Agreed."}, headers=idempotency_key())
    deliver_all(poller)
    line.drain()
    deliver_all(poller)

    with Meter() as meter:
        measure_one = Recorder(meter)
        created = measure_one(
            "POST /posts",
            "new post, fanned out",
            lambda: author.post("/posts", {"text": "Measured.", "tags": [TAG]}, headers={"Idempotency-Key": "rt"}),
            expected=201,
        )
        measure_one(
            "POST /posts",
            "replay",
            lambda: author.post("/posts", {"text": "Measured.", "tags": [TAG]}, headers={"Idempotency-Key": "rt"}),
            expected=201,
        )
        post = f"/posts/{liked}"
        measure_one("GET /posts/{post_id}", "with counters", lambda: feed.get(post), pattern="FEED-004")
        measure_one(
            "GET /users/{user_id}/posts", "first page", lambda: feed.get(f"/users/{AUTHOR}/posts"), pattern="FEED-002"
        )
        first = measure_one(
            "GET /feed", "first page, one celebrity followed", lambda: reader.get("/feed"), pattern="FEED-003"
        )
        measure_one(
            "GET /feed",
            "next page",
            lambda: reader.get("/feed", query={"cursor": first.json["next_cursor"]}),
            pattern="FEED-003",
        )
        measure_one(
            "GET /tags/{tag}/posts",
            "one Query per tag shard",
            lambda: feed.get(f"/tags/{TAG}/posts"),
            pattern="FEED-007",
        )

        followee = f"/users/{AUTHOR}/followers/me"
        measure_one("PUT /users/{user_id}/followers/me", "follow", lambda: newcomer.put(followee), expected=201)
        measure_one("PUT /users/{user_id}/followers/me", "follow again", lambda: newcomer.put(followee))
        measure_one(
            "fanout worker: a follow's task",
            f"backfill of the author's newest {BACKFILL} of {POSTS + 1} posts",
            lambda: _settled(FollowAction.BACKFILL, "U-BENCH-NEWCOMER"),
        )
        measure_one("DELETE /users/{user_id}/followers/me", "unfollow", lambda: newcomer.delete(followee), expected=204)
        measure_one(
            "fanout worker: an unfollow's task",
            f"cleanup: the author's {POSTS + 1} posts of the window deleted by key",
            lambda: _settled(FollowAction.CLEANUP, "U-BENCH-NEWCOMER"),
        )
        measure_one(
            "GET /users/{user_id}/followers",
            "first page",
            lambda: feed.get(f"/users/{AUTHOR}/followers"),
            pattern="FEED-008",
        )
        measure_one("GET /users/{user_id}/following", "first page", lambda: reader.get(f"/users/{READER}/following"))

        likes = f"{post}/likes/me"
        measure_one("PUT /posts/{post_id}/likes/me", "like", lambda: newcomer.put(likes), expected=201)
        measure_one("PUT /posts/{post_id}/likes/me", "like again", lambda: newcomer.put(likes))
        measure_one("DELETE /posts/{post_id}/likes/me", "unlike", lambda: newcomer.delete(likes), expected=204)
        measure_one("GET /posts/{post_id}/likes", "first page", lambda: feed.get(f"{post}/likes"), pattern="FEED-005")

        comment = measure_one(
            "POST /posts/{post_id}/comments",
            "comment",
            lambda: newcomer.post(f"{post}/comments", {"text": "Measured."}, headers=idempotency_key()),
            expected=201,
        )
        measure_one(
            "GET /posts/{post_id}/comments", "first page", lambda: feed.get(f"{post}/comments"), pattern="FEED-006"
        )
        measure_one(
            "DELETE /posts/{post_id}/comments/{comment_id}",
            "by its author",
            lambda: newcomer.delete(f"{post}/comments/{comment.json['comment_id']}"),
            expected=204,
        )

        unread = measure_one(
            "GET /notifications",
            "unread, first page",
            lambda: author.get("/notifications", query={"unread": "true"}),
            pattern="FEED-009",
        )
        measure_one("GET /notifications", "all, first page", lambda: author.get("/notifications"), pattern="FEED-009")
        notification = unread.json["items"][0]["notification_id"]
        measure_one(
            "POST /notifications/{notification_id}/read",
            "one",
            lambda: author.post(f"/notifications/{notification}/read"),
        )
        measure_one("POST /notifications/read", "all the others", lambda: author.post("/notifications/read"))
        month = datetime.now(UTC).strftime("%Y-%m")
        measure_one(
            "GET /leaderboards/authors",
            "this month: one Query per write shard",
            lambda: ops.get("/leaderboards/authors", query={"month": month}),
            pattern="FEED-010",
        )
        measure_one(
            "DELETE /posts/{post_id}",
            "by its author (feed entries leave through the stream)",
            lambda: author.delete(f"/posts/{created.json['post_id']}"),
            expected=204,
        )

    return measure_one.results(
        FUNCTION,
        f"an author with {POSTS} posts tagged `{TAG}` and {FANS + 1} followers, the reader following the author and "
        f"one celebrity with {CELEBRITY_POSTS} posts (merged at read time), {FANS} likes and 3 comments on one "
        "post, the author's notifications as the stream consumer wrote them; every list asks for its default "
        "page size.",
    )
