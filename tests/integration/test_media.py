"""Media of posts against moto: the upload form, the post-time checks of the uploads a post names (its
author's, present, of an accepted type and size, at most 4), the copy that keeps them, and the links.

moto's in-process mock cannot receive a browser form (it intercepts botocore, not HTTP): an upload
here is the object a form that S3 accepted leaves (PutObject with the form's type and owner). The form
itself goes through S3's policy check end to end in tests/e2e/test_media.py.
"""

import base64
import json
import random
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from local.faults import Injector
from local.harness.client import ApiClient
from local.harness.feed_seed import deliver, feed_table, register_profiles
from local.harness.tables import create_tables, table_items
from shopfeed.feed.bootstrap import feed_store
from shopfeed.feed.media import MAX_MEDIA_BYTES, kept_key, upload_key
from shopfeed.platform import clients
from tests.conftest import reset_caches
from tests.support.calls import s3_calls
from tests.support.faults import injected
from tests.support.http_edge import assert_problem
from tests.support.moto_backend import empty_tables, forget_all_but_dynamodb
from tests.support.moto_server import moto_server

BUCKET = "shopfeed-media"  # tests/conftest.py's MEDIA_BUCKET_NAME
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@pytest.fixture
def feed_api(aws: None) -> ApiClient:
    from functions.feed_api.app import lambda_handler

    register_profiles("U100", "U400")
    clients.s3().create_bucket(Bucket=BUCKET)
    return ApiClient(lambda_handler, sub="U100")


def uploaded(client: ApiClient, body: bytes = PNG, content_type: str = "image/png", **changes: Any) -> str:
    """POST /media, then what S3 holds once the form was accepted; the media id."""
    answer = client.post("/media", {"content_type": content_type})
    assert answer.status == 200, answer.text
    fields = answer.json["form"]["fields"]
    clients.s3().put_object(
        Bucket=BUCKET,
        Key=changes.get("key", fields["key"]),
        Body=body,
        ContentType=changes.get("stored_type", fields["Content-Type"]),
        Metadata={"owner": changes.get("owner", fields["x-amz-meta-owner"])},
    )
    return str(answer.json["media_id"])


def post_with(client: ApiClient, *media_ids: str, key: str = "k1") -> Any:
    return client.post("/posts", {"text": "look", "media_ids": list(media_ids)}, headers={"Idempotency-Key": key})


def objects() -> list[str]:
    listed = clients.s3().list_objects_v2(Bucket=BUCKET).get("Contents", [])
    return sorted(entry["Key"] for entry in listed)


def posts_written() -> list[dict[str, Any]]:
    return [item for item in table_items(feed_table()) if item["entity_type"] == "Post"]


# -- the upload form ----------------------------------------------------------------------------------


def test_the_upload_form_names_the_key_type_size_owner_and_expiry_and_calls_nothing(feed_api: ApiClient) -> None:
    # when
    with s3_calls() as calls:
        answer = feed_api.post("/media", {"content_type": "image/webp"})

    # then: signed in the function, no round trip to S3
    assert answer.status == 200
    assert len(calls) == 0
    upload = answer.json
    fields = upload["form"]["fields"]
    assert fields["key"] == upload_key("U100", upload["media_id"])
    assert upload["max_bytes"] == MAX_MEDIA_BYTES
    policy = json.loads(base64.b64decode(fields["policy"]))
    assert {"Content-Type": "image/webp"} in policy["conditions"]
    assert {"x-amz-meta-owner": "U100"} in policy["conditions"]
    assert ["content-length-range", 1, MAX_MEDIA_BYTES] in policy["conditions"]
    assert {"key": fields["key"]} in policy["conditions"]
    # boto3 reads its own clock: the same expiry as the answer's, to the second
    expiration = datetime.fromisoformat(policy["expiration"])
    assert abs(expiration - datetime.fromisoformat(upload["expires_at"])) < timedelta(seconds=2)
    assert fields["x-amz-algorithm"] == "AWS4-HMAC-SHA256"


@pytest.mark.parametrize("content_type", ["text/html", "image/svg+xml", "application/octet-stream"])
def test_a_form_for_a_type_not_accepted_is_refused(feed_api: ApiClient, content_type: str) -> None:
    assert_problem(feed_api.post("/media", {"content_type": content_type}), 422)


# -- a post with media --------------------------------------------------------------------------------


def test_a_post_keeps_its_uploads_and_answers_download_links(feed_api: ApiClient) -> None:
    # given
    first, second = uploaded(feed_api), uploaded(feed_api, b"\x00" * 10, "video/mp4")

    # when
    with s3_calls() as calls:
        answer = post_with(feed_api, first, second)

    # then: one HeadObject per upload, all before one CopyObject each
    assert answer.status == 201, answer.text
    assert calls.operations == ["HeadObject", "HeadObject", "CopyObject", "CopyObject"]
    assert kept_key("U100", first) in objects()
    assert kept_key("U100", second) in objects()
    (item,) = posts_written()
    assert item["media_ref"] == [
        {"media_id": first, "content_type": "image/png", "size_bytes": len(PNG)},
        {"media_id": second, "content_type": "video/mp4", "size_bytes": 10},
    ]
    links = answer.json["media"]
    assert [link["media_id"] for link in links] == [first, second]


def test_reading_a_post_signs_links_to_the_kept_copies_without_calling_s3(feed_api: ApiClient) -> None:
    # given
    media_id = uploaded(feed_api)
    post = post_with(feed_api, media_id).json

    # when
    with s3_calls() as calls:
        answer = feed_api.as_user("U400").get(f"/posts/{post['post_id']}")

    # then
    assert len(calls) == 0
    (link,) = answer.json["media"]
    url = urlsplit(link["url"])
    assert url.path.endswith(f"/{kept_key('U100', media_id)}")
    assert parse_qs(url.query)["X-Amz-Expires"] == ["900"]
    got = clients.s3().get_object(Bucket=BUCKET, Key=kept_key("U100", media_id))
    assert (got["Body"].read(), got["ContentType"]) == (PNG, "image/png")


def test_any_subject_owns_its_uploads_under_one_escaped_segment(feed_api: ApiClient) -> None:
    # given a subject with Unicode, a space and a slash, and one that is its prefix
    odd, prefix = "auth0|ünï/cøde user", "auth0|ünï"
    register_profiles(odd, prefix)
    media_id = uploaded(feed_api.as_user(odd))

    # when
    mine = post_with(feed_api.as_user(odd), media_id)
    theirs = post_with(feed_api.as_user(prefix), media_id, key="k2")

    # then
    assert mine.status == 201, mine.text
    assert kept_key(odd, media_id) == f"media/auth0%7C%C3%BCn%C3%AF%2Fc%C3%B8de%20user/{media_id}"
    assert kept_key(odd, media_id) in objects()
    assert_problem(theirs, 422)


def test_a_followers_home_feed_shows_the_posts_media_links(feed_api: ApiClient) -> None:
    # given a post with media, delivered to U400's feed as the fanout worker would
    media_id = uploaded(feed_api)
    written = post_with(feed_api, media_id).json
    post = feed_store().get_post(written["post_id"])
    assert post is not None
    deliver(post, ["U400"])

    # when
    (item,) = feed_api.as_user("U400").get("/feed").json["items"]

    # then
    assert [link["media_id"] for link in item["media"]] == [media_id]
    assert urlsplit(item["media"][0]["url"]).path.endswith(kept_key("U100", media_id))


def test_a_post_without_media_never_touches_the_bucket(feed_api: ApiClient) -> None:
    # when
    with s3_calls() as calls:
        answer = post_with(feed_api)
        read = feed_api.get(f"/posts/{answer.json['post_id']}")

    # then
    assert (answer.status, read.json["media"], len(calls)) == (201, [], 0)


def test_a_retried_post_with_media_answers_the_first_post(feed_api: ApiClient) -> None:
    # given
    media_id = uploaded(feed_api)
    first = post_with(feed_api, media_id)

    # when
    again = post_with(feed_api, media_id)

    # then: the first post, its media included (the key record keeps the whole post)
    assert again.status == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json["post_id"] == first.json["post_id"]
    assert [link["media_id"] for link in again.json["media"]] == [media_id]
    assert len(posts_written()) == 1


# -- refused: nothing written, nothing copied -----------------------------------------------------------


def refused_and_nothing_written(answer: Any, status: int, before: list[str]) -> None:
    assert_problem(answer, status)
    assert posts_written() == []
    assert objects() == before


def test_someone_elses_upload_is_refused_as_if_it_did_not_exist(feed_api: ApiClient) -> None:
    # given: U400's upload; U100 names its id
    theirs = uploaded(feed_api.as_user("U400"))
    mine = uploaded(feed_api)
    before = objects()

    # when
    answer = post_with(feed_api, mine, theirs)

    # then
    refused_and_nothing_written(answer, 422, before)
    assert answer.json["media_id"] == theirs


def test_an_object_under_my_prefix_not_written_by_my_form_is_refused(feed_api: ApiClient) -> None:
    # given: under U100's uploads, but written for someone else (not through U100's form)
    media_id = uploaded(feed_api, owner="U400")
    before = objects()

    # then
    refused_and_nothing_written(post_with(feed_api, media_id), 422, before)


def test_a_media_id_never_uploaded_is_refused(feed_api: ApiClient) -> None:
    # given: a form asked for, nothing sent
    media_id = feed_api.post("/media", {"content_type": "image/png"}).json["media_id"]
    mine = uploaded(feed_api)
    before = objects()

    # when
    answer = post_with(feed_api, mine, media_id)

    # then
    refused_and_nothing_written(answer, 422, before)
    assert answer.json["media_id"] == media_id


@pytest.mark.parametrize(
    ("body", "stored_type"),
    [(b"x" * (MAX_MEDIA_BYTES + 1), "image/png"), (PNG, "text/html"), (b"", "image/png")],
    ids=["too large", "wrong type", "empty"],
)
def test_an_upload_s3_should_not_have_taken_is_refused_at_post_time(
    feed_api: ApiClient, body: bytes, stored_type: str
) -> None:
    # given: what the form's policy refuses, written past it
    media_id = uploaded(feed_api, body, stored_type=stored_type)
    before = objects()

    # then
    refused_and_nothing_written(post_with(feed_api, media_id), 422, before)


def test_more_than_four_media_or_one_twice_is_refused_before_any_read(feed_api: ApiClient) -> None:
    # given
    media_ids = [uploaded(feed_api) for _ in range(5)]
    before = objects()

    # when
    with s3_calls() as calls:
        five = post_with(feed_api, *media_ids)
        twice = post_with(feed_api, media_ids[0], media_ids[0], key="k2")

    # then
    refused_and_nothing_written(five, 422, before)
    refused_and_nothing_written(twice, 422, before)
    assert len(calls) == 0


# -- S3 failing: a 503 the client retries, nothing written meanwhile ------------------------------------


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with moto_server() as url:
        yield url


@pytest.fixture
def api_over_http(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[ApiClient]:
    """The feed API with its clients sent over HTTP to a moto server (the injector needs real requests)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    reset_caches()
    if feed_table() not in clients.dynamodb().list_tables()["TableNames"]:
        create_tables(clients.dynamodb(), only={feed_table()})
    register_profiles("U100")
    clients.s3().create_bucket(Bucket=BUCKET)
    from functions.feed_api.app import lambda_handler

    yield ApiClient(lambda_handler, sub="U100")
    empty_tables()
    forget_all_but_dynamodb()


def test_s3_failing_at_post_time_is_503_writes_nothing_and_the_retry_takes_effect(api_over_http: ApiClient) -> None:
    # given an upload, and S3 failing every attempt
    media_id = uploaded(api_over_http)
    before = objects()
    with injected(clients.s3(), Injector(1.0, random.Random(0), kinds=["InternalError"])):
        # when the post is sent
        refused = post_with(api_over_http, media_id)

    # then a 503 to retry, and nothing written
    assert_problem(refused, 503)
    assert refused.headers["Retry-After"] == "1"
    assert (posts_written(), objects()) == ([], before)

    # and sent again with its key once S3 is back, it takes effect
    again = post_with(api_over_http, media_id)
    assert again.status == 201, again.text
    assert [item["post_id"] for item in posts_written()] == [again.json["post_id"]]
