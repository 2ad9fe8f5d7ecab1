"""Media over HTTP through the local stack: a file sent as a browser (or curl) sends it, a multipart POST
of the presigned form straight to the stack's S3, a post naming it, and a download through its link.
The stack's S3 checks the form's POST policy as S3 does (local/moto_server.py)."""

import uuid
from typing import Any

import pytest
import requests

from local.harness.feed_builders import profile
from shopfeed.feed import items
from shopfeed.feed.media import MAX_MEDIA_BYTES
from shopfeed.platform import dynamo
from tests.e2e.conftest import Client, LocalStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 2048 + b"\xff\xd9"


def author(stack: LocalStack, name: str) -> Client:
    suffix = uuid.uuid4().hex[:8]
    user_id = f"{name}-{suffix}"
    item = items.profile_item(profile(user_id, handle=f"media_{suffix}"))
    stack.dynamodb().put_item(TableName=stack.page()["resources"]["FeedTable"]["name"], Item=dynamo.serialize(item))
    return Client(stack, stack.token(user_id))


def upload_form(client: Client, content_type: str = "image/jpeg") -> dict[str, Any]:
    answer = client.post("/media", json={"content_type": content_type})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def send(form: dict[str, Any], body: bytes, content_type: str | None = None) -> requests.Response:
    """The form's fields, then the file: multipart/form-data, as ``curl -F`` sends it."""
    fields = dict(form["form"]["fields"])
    if content_type is not None:
        fields["Content-Type"] = content_type
    return requests.post(form["form"]["url"], data=fields, files={"file": ("photo", body)}, timeout=30)


def uploaded(client: Client, body: bytes = JPEG) -> str:
    form = upload_form(client)
    assert send(form, body).status_code == 204
    return str(form["media_id"])


def post_with(client: Client, *media_ids: str) -> requests.Response:
    body = {"text": "look", "media_ids": list(media_ids)}
    return client.post("/posts", json=body, headers={"Idempotency-Key": str(uuid.uuid4())})


def my_posts(client: Client) -> list[dict[str, Any]]:
    return list(client.get("/users/me/posts").json()["items"])


def assert_refused(answer: requests.Response, status: int, code: str) -> None:
    """S3's error document: an XML body naming the code."""
    assert answer.status_code == status, answer.text
    assert f"<Code>{code}</Code>" in answer.text


def assert_problem(answer: requests.Response, status: int) -> None:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize("name", ["Snap", "auth0|ünï/cøde user"], ids=["plain subject", "odd subject"])
def test_an_upload_through_the_form_and_a_post_with_it_end_to_end(local_stack: LocalStack, name: str) -> None:
    # given (any subject: its keys and owner metadata are escaped, decision 127)
    client = author(local_stack, name)
    form = upload_form(client)

    # when: the file goes to S3, not through the API
    stored = send(form, JPEG)
    post = post_with(client, form["media_id"])

    # then
    assert stored.status_code == 204
    assert post.status_code == 201, post.text
    read = client.get(f"/posts/{post.json()['post_id']}").json()
    (link,) = read["media"]
    assert (link["media_id"], link["content_type"], link["size_bytes"]) == (form["media_id"], "image/jpeg", len(JPEG))
    download = requests.get(link["url"], timeout=30)
    assert (download.status_code, download.content, download.headers["content-type"]) == (200, JPEG, "image/jpeg")
    assert [listed["post_id"] for listed in my_posts(client)] == [post.json()["post_id"]]


def test_s3_refuses_a_file_over_the_cap_and_nothing_is_stored(local_stack: LocalStack) -> None:
    # given
    client = author(local_stack, "Big")
    form = upload_form(client)

    # when
    answer = send(form, b"\x00" * (MAX_MEDIA_BYTES + 1))

    # then: refused by the form's content-length-range; the post cannot name it
    assert_refused(answer, 400, "EntityTooLarge")
    assert_problem(post_with(client, form["media_id"]), 422)


def test_s3_refuses_a_file_of_another_type_than_the_form_names(local_stack: LocalStack) -> None:
    # given: a form for a JPEG
    client = author(local_stack, "Html")
    form = upload_form(client)

    # when: an HTML page is sent with it
    answer = send(form, b"<script>alert(1)</script>", content_type="text/html")

    # then
    assert_refused(answer, 403, "AccessDenied")
    assert_problem(post_with(client, form["media_id"]), 422)


def test_s3_refuses_a_form_whose_key_was_changed(local_stack: LocalStack) -> None:
    # given: my form, pointed at another user's prefix
    client = author(local_stack, "Key")
    form = upload_form(client)
    form["form"]["fields"]["key"] = form["form"]["fields"]["key"].replace("uploads/", "uploads/someone-else-")

    # then
    assert_refused(send(form, JPEG), 403, "AccessDenied")


def test_a_post_naming_someone_elses_upload_is_refused_and_writes_nothing(local_stack: LocalStack) -> None:
    # given
    other = author(local_stack, "Other")
    theirs = uploaded(other)
    client = author(local_stack, "Thief")

    # when
    answer = post_with(client, theirs)

    # then
    assert_problem(answer, 422)
    assert answer.json()["media_id"] == theirs
    assert my_posts(client) == []


def test_a_post_naming_a_missing_upload_or_five_is_refused_and_writes_nothing(local_stack: LocalStack) -> None:
    # given
    client = author(local_stack, "Many")
    never_sent = upload_form(client)["media_id"]
    five = [uploaded(client) for _ in range(5)]

    # then
    assert_problem(post_with(client, never_sent), 422)
    assert_problem(post_with(client, *five), 422)
    assert my_posts(client) == []
