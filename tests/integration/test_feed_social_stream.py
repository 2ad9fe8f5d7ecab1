"""Likes, comments and follows through the FeedTable stream consumer (moto, real stream records):
post counters, notifications made once however often a batch comes, collapsed like notifications,
and counts of a post that is gone dropped rather than retried forever."""

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from functions.feed_stream.app import lambda_handler
from local.harness import feed_builders
from local.harness.apigw import sample
from local.harness.client import LambdaContext
from local.harness.fanout import FanoutLine, delete_post, follow, put_post, put_profiles
from local.harness.tables import create_tables
from shopfeed.feed import items, keys
from shopfeed.feed.engagement import notifications
from shopfeed.feed.engagement.repository import EngagementRepository
from shopfeed.feed.models import Comment, Like, NotificationKind, Post
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import derived_id
from shopfeed.platform.cursors import CursorCodec
from tests.integration.outbox_support import CommerceStream, batch
from tests.integration.test_feed_stream import FEED_STREAM, TABLE
from tests.support.calls import dynamodb_calls
from tests.support.expiry import reads_at

ROUTED = (items.POST, items.FOLLOW, items.LIKE, items.COMMENT)


@pytest.fixture
def feed(aws: None, monkeypatch: pytest.MonkeyPatch) -> CommerceStream:
    if TABLE not in clients.dynamodb().list_tables()["TableNames"]:
        create_tables(clients.dynamodb(), only={TABLE})  # the tier's own fixture makes commerce's only
    line = FanoutLine.create()
    monkeypatch.setenv("FEED_TABLE_NAME", TABLE)
    monkeypatch.setenv("FANOUT_QUEUE_URL", line.url)
    put_profiles(TABLE, "U100", "U200", "U300")
    # Notifications here are read in May 2026: they expire (TTL) 30 days after, long before today.
    reads_at(monkeypatch, lambda: datetime(2026, 5, 3, tzinfo=UTC))
    stream = CommerceStream(TABLE)
    stream.read()
    return stream


def routed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the template's filter lets in."""

    def entity(record: dict[str, Any]) -> str:
        # moto streams an UpdateItem that creates an item (an applied set) as two INSERTs, the first
        # with its key alone; DynamoDB streams one, and no pattern lets a typeless image in.
        image = record["dynamodb"].get("NewImage") or record["dynamodb"]["OldImage"]
        return str(image.get("entity_type", {}).get("S", ""))

    return [r for r in records if r["eventName"] in ("INSERT", "REMOVE") and entity(r) in ROUTED]


def consume(records: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(lambda_handler(batch(records), FEED_STREAM))


def put(item: dict[str, Any]) -> None:
    clients.dynamodb().put_item(TableName=TABLE, Item=dynamo.serialize(item))


def like(post: Post, user_id: str, at: str = "2026-05-01T10:15:00.000Z") -> Like:
    made = Like(post_id=post.post_id, user_id=user_id, post_author_id=post.author_id, liked_at=at)
    put(items.like_item(made))
    return made


def comment(post: Post, user_id: str, comment_id: str) -> Comment:
    made = feed_builders.comment(post, user_id, comment_id=comment_id)
    put(items.comment_item(made))
    return made


def stored_post(post: Post) -> Post:
    raw = clients.dynamodb().get_item(
        TableName=TABLE, Key=dynamo.serialize(keys.post(post.post_id)), ConsistentRead=True
    )
    return items.post_from(dynamo.deserialize(raw["Item"]))


def social() -> EngagementRepository:
    return EngagementRepository(dynamo.Table(clients.dynamodb(), TABLE), CursorCodec(b"test-cursor-secret"))


def test_likes_and_comments_count_on_their_post_and_notify_its_author_once_however_often_the_batch_comes(
    feed: CommerceStream,
) -> None:
    # given a post, a follow, two likes (one the author's own) and a comment
    post = feed_builders.post("U100")
    put_post(TABLE, post)
    follow(TABLE, "U200", "U100")
    like(post, "U200")
    like(post, "U100")
    comment(post, "U300", "01JAAAAAAAAAAAAAAAAAAAAAAA")
    records = routed(feed.read())
    # when the batch is delivered three times
    answers = [consume(records) for _ in range(3)]
    # then
    assert answers == [{"batchItemFailures": []}] * 3
    assert (stored_post(post).likes_count, stored_post(post).comments_count) == (2, 1)
    notifications = social().list_notifications("U100", unread=True, limit=50, cursor=None).items
    assert sorted((n.kind, n.actor_id, n.count) for n in notifications) == [
        ("comment", "U300", 1),
        ("follow", "U200", 1),
        ("likes", "U200", 1),
    ]


def test_a_read_notification_stays_out_of_the_unread_index_when_its_record_comes_again(
    feed: CommerceStream,
) -> None:
    # given a follow notified, then read
    follow(TABLE, "U200", "U100")
    records = routed(feed.read())
    consume(records)
    (notification,) = social().list_notifications("U100", unread=True, limit=50, cursor=None).items
    social().mark_read("U100", notification.notification_id, "2026-05-02T00:00:00.000Z")
    # when its record is delivered again
    assert consume(records) == {"batchItemFailures": []}
    # then it is listed as read, and not as unread
    assert social().list_notifications("U100", unread=True, limit=50, cursor=None).items == []
    (again,) = social().list_notifications("U100", unread=False, limit=50, cursor=None).items
    assert again.read_at == "2026-05-02T00:00:00.000Z"


def test_a_like_storm_collapses_into_one_notification_per_post_per_hour_with_its_count(
    feed: CommerceStream,
) -> None:
    # given 150 likes within one hour and 2 in the next
    post = feed_builders.post("U100")
    put_post(TABLE, post)
    for n in range(150):
        like(post, f"L{n:03d}", at=f"2026-05-01T10:{n % 60:02d}:00.000Z")
    like(post, "M001", at="2026-05-01T11:05:00.000Z")
    like(post, "M002", at="2026-05-01T11:06:00.000Z")
    records = routed(feed.read())
    # when delivered in one batch of more than 100 records, again whole, then again from its 100th
    with dynamodb_calls() as calls:
        assert consume(records) == {"batchItemFailures": []}
    for delivery in (records, records[99:]):
        assert consume(delivery) == {"batchItemFailures": []}
    # then the post was written once for the batch, and two notifications, newest hour first, with
    # exact counts
    post_key = dynamo.serialize(keys.post(post.post_id))
    writes = [
        params
        for operation, params in calls.requests
        if operation == "TransactWriteItems"
        and any(item.get("Update", {}).get("Key") == post_key for item in params["TransactItems"])
    ]
    assert len(writes) == 1
    listed = social().list_notifications("U100", unread=True, limit=50, cursor=None).items
    assert [(n.created_at, n.count) for n in listed] == [
        ("2026-05-01T11:00:00.000Z", 2),
        ("2026-05-01T10:00:00.000Z", 150),
    ]
    assert stored_post(post).likes_count == 152


def test_likes_and_comments_of_a_deleted_post_are_removed_and_their_removal_counts_nothing(
    feed: CommerceStream,
) -> None:
    # given a post with a like and a comment, counted
    post = feed_builders.post("U100")
    put_post(TABLE, post)
    like(post, "U200")
    comment(post, "U300", "01JAAAAAAAAAAAAAAAAAAAAAAA")
    consume(routed(feed.read()))
    # when the post is deleted
    delete_post(TABLE, post)
    first = consume(routed(feed.read()))
    # then its likes and comments are removed, and their removal records fail nothing
    left = clients.dynamodb().query(
        TableName=TABLE,
        KeyConditionExpression="PK = :post",
        ExpressionAttributeValues={":post": {"S": keys.post_partition(post.post_id)}},
        ConsistentRead=True,
    )["Items"]
    assert (first, left) == ({"batchItemFailures": []}, [])
    assert consume(routed(feed.read())) == {"batchItemFailures": []}


def test_ids_derived_from_a_cause_repeat_for_it_and_sort_by_its_time() -> None:
    # given
    earlier = derived_id("2026-05-01T10:00:00.000Z", "follow|U1|U2|t")
    later = derived_id("2026-05-01T10:00:00.001Z", "follow|U1|U3|t")
    # then
    assert earlier == derived_id("2026-05-01T10:00:00.000Z", "follow|U1|U2|t")
    assert earlier < later
    assert len(earlier) == 26


def test_the_sample_like_record_counts_on_its_post_and_notifies_its_author(feed: CommerceStream) -> None:
    # given the post the sample like is on
    post = feed_builders.post("U100").model_copy(update={"post_id": "01KAB3C4D5E6F7G8H9J0K1M2N3"})
    put_post(TABLE, post)
    # when
    answer = consume(sample("streams/feed_like_inserted.json")["Records"])
    # then
    assert answer == {"batchItemFailures": []}
    assert stored_post(post).likes_count == 1
    (notification,) = social().list_notifications("U100", unread=True, limit=50, cursor=None).items
    assert (notification.kind, notification.actor_id, notification.count) == ("likes", "U400", 1)


def test_the_sample_api_events_like_a_post_and_read_its_authors_unread_notifications(feed: CommerceStream) -> None:
    from functions.feed_api.app import lambda_handler as feed_api

    def invoke(name: str) -> tuple[int, dict[str, Any]]:
        answer = feed_api(sample(f"api/{name}.json"), LambdaContext())
        return answer["statusCode"], json.loads(answer["body"])

    # given the post the sample like is on
    put_post(TABLE, feed_builders.post("U100").model_copy(update={"post_id": "01KAB3C4D5E6F7G8H9J0K1M2N3"}))
    # when U400 likes it (twice), and the stream is delivered
    liked, again = invoke("like_post"), invoke("like_post")
    consume(routed(feed.read()))
    status, unread = invoke("unread_notifications")
    # then
    assert (liked[0], again[0], status) == (201, 200, 200)
    assert [(n["kind"], n["actor_id"], n["count"]) for n in unread["items"]] == [("likes", "U400", 1)]


def test_following_and_unfollowing_ten_times_in_an_hour_notifies_once(feed: CommerceStream) -> None:
    # given U200 follows and unfollows U100 ten times in one hour, then follows again the next hour
    for minute in range(10):
        edge = items.follow_item(feed_builders.follow("U200", "U100", at=datetime(2026, 5, 1, 10, minute, tzinfo=UTC)))
        put(edge)
        clients.dynamodb().delete_item(TableName=TABLE, Key=dynamo.serialize(keys.follow("U100", "U200")))
    put(items.follow_item(feed_builders.follow("U200", "U100", at=datetime(2026, 5, 1, 11, 5, tzinfo=UTC))))
    records = routed(feed.read())
    # when the batch comes twice
    assert [consume(records) for _ in range(2)] == [{"batchItemFailures": []}] * 2
    # then one notification for the hour of the ten, one for the next
    notifications = social().list_notifications("U100", unread=True, limit=50, cursor=None).items
    assert [(n.kind, n.actor_id, n.created_at) for n in notifications] == [
        ("follow", "U200", "2026-05-01T11:00:00.000Z"),
        ("follow", "U200", "2026-05-01T10:00:00.000Z"),
    ]


# -- marking all read ---------------------------------------------------------------------------

READ_AT = "2026-05-02T00:00:00.000Z"


def unread_follow_notifications(count: int) -> list[str]:
    """``count`` unread follow notifications of U100 (one per follower), as the stream consumer puts them."""
    made = [
        notifications.follow_notification(
            feed_builders.follow(f"U9{n:03d}", "U100", at=datetime(2026, 5, 1, tzinfo=UTC))
        )
        for n in range(count)
    ]
    for notification in made:
        put(items.notification_item(notification))
    return [notification.notification_id for notification in made]


def test_marking_all_read_is_one_query_and_one_transaction_per_hundred_notifications(feed: CommerceStream) -> None:
    # given 150 unread notifications and one read already
    earlier, *_ = unread_follow_notifications(151)
    social().mark_read("U100", earlier, "2026-05-01T12:00:00.000Z")
    # when
    with dynamodb_calls() as calls:
        marked = social().mark_all_read("U100", READ_AT)
    # then: 4 round trips where an UpdateItem each took 152
    assert marked == 150
    assert calls.operations == ["Query", "TransactWriteItems", "Query", "TransactWriteItems"]
    assert social().list_notifications("U100", unread=True, limit=50, cursor=None).items == []
    listed = [n for page in all_notifications("U100") for n in page]
    assert len(listed) == 151
    assert {n.read_at for n in listed if n.notification_id != earlier} == {READ_AT}
    assert [n.read_at for n in listed if n.notification_id == earlier] == ["2026-05-01T12:00:00.000Z"]  # kept
    stored = table_items_of("U100")
    assert all(items.EXPIRES_AT in i and keys.UNREAD_BY_USER.partition_key not in i for i in stored)


def test_a_read_notification_past_its_ttl_is_not_listed_though_ttl_has_not_deleted_it(
    feed: CommerceStream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given two notifications, one read on May 1st (it expires 30 days later)
    read, unread = unread_follow_notifications(2)
    social().mark_read("U100", read, "2026-05-01T12:00:00.000Z")
    assert len(all_notifications("U100")[0]) == 2
    # when read after its expiry, before TTL deleted it
    reads_at(monkeypatch, lambda: datetime(2026, 6, 1, tzinfo=UTC))
    # then only the unread one is listed, though both are stored
    assert [n.notification_id for page in all_notifications("U100") for n in page] == [unread]
    assert len(table_items_of("U100")) == 2


def test_marking_all_read_leaves_out_a_notification_gone_since_the_index_listed_it(feed: CommerceStream) -> None:
    # given three unread notifications, one of which goes between the Query and the transaction
    first, gone, last = unread_follow_notifications(3)
    client = clients.dynamodb()

    def remove_one(**_: Any) -> None:
        client.meta.events.unregister("before-call.dynamodb.TransactWriteItems", remove_one)
        client.delete_item(TableName=TABLE, Key=dynamo.serialize(keys.notification("U100", gone)))

    client.meta.events.register("before-call.dynamodb.TransactWriteItems", remove_one)
    # when
    with dynamodb_calls() as calls:
        marked = social().mark_all_read("U100", READ_AT)
    # then the transaction is sent again without it, and it is not brought back
    assert marked == 2
    assert calls.operations == ["Query", "DeleteItem", "TransactWriteItems", "TransactWriteItems"]
    assert sorted(i["SK"] for i in table_items_of("U100")) == sorted([first, last])


def all_notifications(user_id: str) -> list[list[Any]]:
    pages, cursor = [], None
    while True:
        page = social().list_notifications(user_id, unread=False, limit=50, cursor=cursor)
        pages.append(page.items)
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor


def table_items_of(user_id: str) -> list[dict[str, Any]]:
    response = clients.dynamodb().query(
        TableName=TABLE,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": keys.notification_partition(user_id)}},
        ConsistentRead=True,
    )
    return [dynamo.deserialize(raw) for raw in response["Items"]]


# -- mentions -----------------------------------------------------------------------------------


def register_handles(*user_ids: str) -> None:
    """The unique-handle guards registration writes (each user's handle is ``feed_builders.handle_of``)."""
    for user_id in user_ids:
        put(items.handle_guard_item(feed_builders.profile(user_id)))


def mentions_of(user_id: str) -> list[tuple[str, str | None, str | None]]:
    listed = social().list_notifications(user_id, unread=True, limit=50, cursor=None).items
    return [(n.actor_id, n.post_id, n.comment_id) for n in listed if n.kind is NotificationKind.MENTION]


def test_a_post_naming_three_handles_one_unknown_notifies_two_users_once_each_however_often_it_comes(
    feed: CommerceStream,
) -> None:
    # given U100's post naming U200 (twice), U300, a handle nobody holds, and U100 itself
    register_handles("U100", "U200", "U300")
    text = "Thanks @user_u200 and @USER_U300, not @nobody_here; @user_u100 wrote it, @user_u200 again."
    post = feed_builders.post("U100", text=text)
    put_post(TABLE, post)
    records = routed(feed.read())
    # when the batch is delivered three times
    assert [consume(records) for _ in range(3)] == [{"batchItemFailures": []}] * 3
    # then U200 and U300 are notified once each, and the author is not
    assert mentions_of("U200") == [("U100", post.post_id, None)]
    assert mentions_of("U300") == [("U100", post.post_id, None)]
    assert mentions_of("U100") == []


def test_a_comment_mentioning_someone_notifies_them_once_beside_the_posts_author(feed: CommerceStream) -> None:
    # given U300 comments on U100's post, naming U200
    register_handles("U100", "U200", "U300")
    post = feed_builders.post("U100")
    put_post(TABLE, post)
    made = feed_builders.comment(post, "U300", text="@user_u200 have a look")
    put(items.comment_item(made))
    records = routed(feed.read())
    # when the batch is delivered twice
    assert [consume(records) for _ in range(2)] == [{"batchItemFailures": []}] * 2
    # then U200 is notified of the comment, and the post's author of the comment as before
    assert mentions_of("U200") == [("U300", post.post_id, made.comment_id)]
    listed = social().list_notifications("U100", unread=True, limit=50, cursor=None).items
    assert [(n.kind, n.actor_id) for n in listed] == [("comment", "U300")]
