"""Path arguments arrive percent-encoded in ``rawPath`` (what Powertools routes on) and reach the routes decoded."""

from urllib.parse import quote

import pytest

from local.harness.client import ApiClient
from local.harness.factories import user_body

SUBJECTS = [
    pytest.param("Ada Lovelace", id="a space"),
    pytest.param("auth0|5f7c8ec7c33c6c004bbafe82", id="a bar"),
    pytest.param("user#42%", id="hash and percent"),
    pytest.param("Jürgen-日本", id="non-ASCII"),
    pytest.param("a/b", id="a slash"),
]


@pytest.mark.parametrize("subject", SUBJECTS)
def test_a_user_id_sent_percent_encoded_in_the_path_finds_its_user(commerce_api: ApiClient, subject: str) -> None:
    # given
    assert commerce_api.as_user(subject).post("/users", user_body()).status == 201

    # when
    answer = commerce_api.as_user("U-SOMEONE").get(f"/users/{quote(subject, safe='')}")

    # then
    assert answer.status == 200, answer.text
    assert answer.json["user_id"] == subject
