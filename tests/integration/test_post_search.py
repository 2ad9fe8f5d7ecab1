"""Post search against moto's FeedTable stream and each search engine: the feed stream consumer keeps
the posts index exactly as the table (whatever order and however often records arrive, deletes
included), and GET /search/posts answers from it."""

from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from functions.feed_stream.app import lambda_handler as feed_stream_handler
from local.harness.client import ApiClient
from local.harness.fanout import FanoutLine
from local.harness.feed_factories import write_post
from local.harness.feed_seed import register_profiles
from local.harness.tables import table_items
from shopfeed.feed import items, keys
from shopfeed.feed.posts.search import POST_PROJECTION, POSTS, post_document
from shopfeed.platform import clients, dynamo, streams
from shopfeed.platform.search import SearchIndex
from shopfeed.platform.search.sync import ApplyReport
from tests.integration.outbox_support import CommerceStream, batch, failed_sequence_numbers
from tests.integration.test_feed_stream import FEED_STREAM, TABLE
from tests.support.search import SearchSyncLine, delivered, osmem_engine, osmem_url, search_index, search_sync

__all__ = ["osmem_engine", "osmem_url", "search_index", "search_sync"]


@pytest.fixture
def feed_api(aws: None, monkeypatch: pytest.MonkeyPatch) -> ApiClient:
    from functions.feed_api.app import lambda_handler

    monkeypatch.setenv("FANOUT_QUEUE_URL", FanoutLine.create().url)
    register_profiles("U100", "U200")  # handles user_u100, user_u200
    return ApiClient(lambda_handler, sub="U100")


@pytest.fixture
def feed_stream(feed_api: ApiClient) -> CommerceStream:
    # The reader takes any table: FeedTable's stream, read as Lambda's event source mapping shapes it.
    stream = CommerceStream(TABLE)
    stream.read()  # the profiles
    return stream


@pytest.fixture
def search_endpoint(osmem_url: str, search_sync: SearchSyncLine, monkeypatch: pytest.MonkeyPatch) -> str:
    """A stack with search: the engine, and the queue the consumer puts its writes on (``search_sync``)."""
    monkeypatch.setenv("SEARCH_ENDPOINT", osmem_url)
    return osmem_url


def _entity(record: dict[str, Any]) -> str:
    image = record["dynamodb"].get("NewImage") or record["dynamodb"].get("OldImage") or {}
    return str(image.get("entity_type", {}).get("S", ""))


def post_records(stream: CommerceStream) -> list[dict[str, Any]]:
    return [record for record in stream.read() if _entity(record) == items.POST]


def consume(stream: CommerceStream) -> dict[str, Any]:
    """Deliver the post records the stream holds to the feed stream consumer, as Lambda would."""
    records = post_records(stream)
    return dict(feed_stream_handler(batch(records), FEED_STREAM)) | {"records": records}


def deliver(records: list[dict[str, Any]], index: SearchIndex) -> ApplyReport:
    changes = [streams.parse(DynamoDBRecord(record)) for record in records]
    return delivered(changes, POST_PROJECTION, index)


def post_items() -> dict[str, dict[str, Any]]:
    return {item["post_id"]: item for item in table_items(TABLE) if item.get("entity_type") == items.POST}


def assert_index_matches_table(index: SearchIndex, post_ids: set[str]) -> None:
    """Every post of the table is its document at its version; every other id is a tombstone."""
    table = post_items()
    stored = index.get(POSTS, sorted(post_ids))
    for post_id in sorted(post_ids):
        if post_id in table:
            item = table[post_id]
            assert (stored[post_id].deleted, stored[post_id].version) == (False, item["version"]), post_id
            assert dict(stored[post_id].body) == post_document(item)[1], post_id
        else:
            assert stored[post_id].deleted is True, post_id


def edit(post_id: str, text: str) -> None:
    """What an edit would write (no route edits a post yet): new text, the version bumped."""
    clients.dynamodb().update_item(
        TableName=TABLE,
        Key=dynamo.serialize(keys.post(post_id)),
        UpdateExpression="SET #text = :text ADD version :one",
        ExpressionAttributeNames={"#text": "text"},
        ExpressionAttributeValues=dynamo.serialize({":text": text, ":one": 1}),
    )


def count_a_like(post_id: str) -> None:
    """What the counters consumer writes on a liked post: a MODIFY that keeps the version."""
    clients.dynamodb().update_item(
        TableName=TABLE,
        Key=dynamo.serialize(keys.post(post_id)),
        UpdateExpression="ADD likes_count :one",
        ExpressionAttributeValues=dynamo.serialize({":one": 1}),
    )


@pytest.fixture
def history(feed_api: ApiClient, feed_stream: CommerceStream) -> tuple[list[dict[str, Any]], set[str]]:
    """Post A is liked, then edited to v2 and v3; post B is deleted. Their records, in stream order."""
    a = write_post(feed_api, "Sparse indexes hold only what you query", "dynamodb")["post_id"]
    b = write_post(feed_api, "Access patterns first", "modeling")["post_id"]
    count_a_like(a)
    edit(a, "Sparse indexes, second draft")
    edit(a, "Sparse indexes hold only the items you will query")
    assert feed_api.delete(f"/posts/{b}").status == 204
    records = post_records(feed_stream)
    assert [r["eventName"] for r in records] == ["INSERT", "INSERT", "MODIFY", "MODIFY", "MODIFY", "REMOVE"]
    return records, {a, b}


def test_an_in_order_stream_leaves_the_posts_index_as_the_table(
    history: tuple[list[dict[str, Any]], set[str]], search_index: SearchIndex
) -> None:
    # given
    records, post_ids = history
    # when
    report = deliver(records, search_index)
    # then: the like changed no version, so it queued nothing (five writes of six records)
    assert (report.applied, report.stale, report.failures) == (5, 0, {})
    assert_index_matches_table(search_index, post_ids)


def test_a_batch_replayed_out_of_order_and_twice_leaves_the_posts_index_as_the_table(
    history: tuple[list[dict[str, Any]], set[str]], search_index: SearchIndex
) -> None:
    # given: MODIFY v3 before v2 before the INSERT, the REMOVE before the INSERT it followed
    records, post_ids = history
    insert_a, insert_b, liked_a, a_v2, a_v3, remove_b = records
    scrambled = [a_v3, remove_b, a_v2, liked_a, insert_a, insert_b]
    # when: the scrambled batch, then all of it again as a redelivery would
    first = deliver(scrambled, search_index)
    again = deliver(records, search_index)
    # then
    assert (first.applied, first.stale, first.failures) == (2, 3, {})
    # (a tombstone rewritten at its own version changes nothing: the one "applied" of the redelivery)
    assert (again.applied, again.stale, again.failures) == (1, 4, {})
    assert_index_matches_table(search_index, post_ids)


def test_a_late_insert_after_the_remove_does_not_bring_the_post_back(
    history: tuple[list[dict[str, Any]], set[str]], search_index: SearchIndex
) -> None:
    # given
    records, _ = history
    _, insert_b, *_, remove_b = records
    deliver([remove_b], search_index)
    # when
    report = deliver([insert_b], search_index)
    # then
    assert (report.applied, report.stale) == (0, 1)
    post_b = remove_b["dynamodb"]["OldImage"]["post_id"]["S"]
    assert search_index.get(POSTS, [post_b])[post_b].deleted is True


# -- through the functions: the feed stream consumer and GET /search/posts ---------------------------


@pytest.fixture
def posts(
    feed_api: ApiClient, feed_stream: CommerceStream, search_endpoint: str, search_sync: SearchSyncLine
) -> dict[str, str]:
    written = {
        "sparse": write_post(feed_api, "A sparse index holds only what you will query.", "dynamodb")["post_id"],
        "keys": write_post(feed_api, "Access patterns first, keys second.", "#DynamoDB", "modeling")["post_id"],
        "lunch": write_post(feed_api, "Lunch was good today.")["post_id"],
        "grace": write_post(feed_api.as_user("U200"), "Indexes everywhere.", "aws")["post_id"],
    }
    assert consume(feed_stream)["batchItemFailures"] == []
    search_sync.drain()
    return written


def ids(answer: Any) -> list[str]:
    return [item["post_id"] for item in answer.json["items"]]


def test_search_finds_posts_by_text_most_relevant_first(feed_api: ApiClient, posts: dict[str, str]) -> None:
    # when: English stemming, "indexes" finds "index"
    answer = feed_api.get("/search/posts", query={"q": "indexes"})
    # then
    assert answer.status == 200, answer.text
    assert set(ids(answer)) == {posts["sparse"], posts["grace"]}
    hit = next(item for item in answer.json["items"] if item["post_id"] == posts["grace"])
    assert (hit["author_id"], hit["author_handle"], hit["tags"]) == ("U200", "user_u200", ["aws"])


def test_search_finds_posts_by_tag_and_by_author_handle(feed_api: ApiClient, posts: dict[str, str]) -> None:
    # when
    by_tag = feed_api.get("/search/posts", query={"q": "dynamodb"})
    by_handle = feed_api.get("/search/posts", query={"q": "user_u200"})
    # then
    assert set(ids(by_tag)) == {posts["sparse"], posts["keys"]}
    assert ids(by_handle) == [posts["grace"]]


def test_search_filters_by_a_tag_as_a_client_writes_it(feed_api: ApiClient, posts: dict[str, str]) -> None:
    # when
    answer = feed_api.get("/search/posts", query={"q": "keys index", "tag": "#Modeling"})
    # then
    assert ids(answer) == [posts["keys"]]


def test_search_pages_with_a_cursor_bound_to_its_query(feed_api: ApiClient, posts: dict[str, str]) -> None:
    # given
    first = feed_api.get("/search/posts", query={"q": "dynamodb", "limit": 1})
    cursor = first.json["next_cursor"]
    # when
    second = feed_api.get("/search/posts", query={"q": "dynamodb", "limit": 1, "cursor": cursor})
    foreign = feed_api.get("/search/posts", query={"q": "dynamodb", "tag": "aws", "limit": 1, "cursor": cursor})
    # then
    assert sorted(ids(first) + ids(second)) == sorted([posts["sparse"], posts["keys"]])
    assert foreign.status == 400
    assert foreign.json["type"].endswith("/invalid-cursor")


def test_a_deleted_post_never_appears_even_before_the_stream_removes_it_from_the_index(
    feed_api: ApiClient, posts: dict[str, str]
) -> None:
    # when the post is deleted and its REMOVE has not reached the index yet
    assert feed_api.delete(f"/posts/{posts['sparse']}").status == 204
    # then the search leaves it out all the same
    assert ids(feed_api.get("/search/posts", query={"q": "sparse index"})) == [posts["grace"]]


def test_a_deleted_post_never_appears(
    feed_api: ApiClient, feed_stream: CommerceStream, posts: dict[str, str], search_sync: SearchSyncLine
) -> None:
    # when
    assert feed_api.delete(f"/posts/{posts['sparse']}").status == 204
    assert consume(feed_stream)["batchItemFailures"] == []
    search_sync.drain()
    # then
    assert ids(feed_api.get("/search/posts", query={"q": "sparse index"})) == [posts["grace"]]


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"q": ""},
        {"q": "   "},
        {"q": "x" * 201},
        {"q": "a", "limit": 0},
        {"q": "a", "limit": 51},
        {"q": "a", "tag": "no tag"},
    ],
)
def test_a_bad_post_search_is_422(feed_api: ApiClient, search_endpoint: str, query: dict[str, Any]) -> None:
    # when
    answer = feed_api.get("/search/posts", query=query)
    # then
    assert answer.status == 422, answer.text
    assert answer.content_type == "application/problem+json"


def test_post_search_without_a_token_is_401(feed_api: ApiClient, search_endpoint: str) -> None:
    # when
    answer = feed_api.as_user(None).get("/search/posts", query={"q": "index"})
    # then
    assert answer.status == 401


def test_post_search_without_a_configured_engine_is_503(feed_api: ApiClient) -> None:
    # when
    answer = feed_api.get("/search/posts", query={"q": "index"})
    # then
    assert answer.status == 503
    assert answer.json["type"].endswith("/search-unavailable")


def test_a_post_record_that_can_never_index_fails_alone(
    feed_api: ApiClient, feed_stream: CommerceStream, search_endpoint: str, search_sync: SearchSyncLine
) -> None:
    # given: a post item without text (no route writes one) between two good posts
    first = write_post(feed_api, "first")["post_id"]
    poison = {
        **keys.post("01ARZ3NDEKTSV4RRFFQ69G5FAV"),
        "entity_type": items.POST,
        "post_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV",
    }
    clients.dynamodb().put_item(TableName=TABLE, Item=dynamo.serialize(poison))
    second = write_post(feed_api, "second")["post_id"]
    # when
    answer = consume(feed_stream)
    # then: only the poison record fails (as it will on each retry, until the mapping parks it in the DLQ)
    poison_sequence = [
        r["dynamodb"]["SequenceNumber"] for r in answer["records"] if poison["PK"] in str(r["dynamodb"]["Keys"])
    ]
    assert failed_sequence_numbers(answer) == poison_sequence
    search_sync.drain()
    assert sorted(ids(feed_api.get("/search/posts", query={"q": "first second"}))) == sorted([first, second])


def test_without_a_search_engine_post_records_are_acknowledged(
    feed_api: ApiClient, feed_stream: CommerceStream
) -> None:
    # given: a stack deployed with search off (no search sync queue, no SEARCH_ENDPOINT)
    write_post(feed_api, "hello")
    # when
    answer = consume(feed_stream)
    # then: nothing to retry, nothing for the DLQ
    assert answer["batchItemFailures"] == []
