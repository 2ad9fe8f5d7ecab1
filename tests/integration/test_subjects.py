"""Any subject a standards-compliant issuer sends is a user id; keys embed it so it can forge none."""

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, line, order_body, user_body
from local.harness.tables import table_items
from shopfeed.platform.identity import MAX_SUBJECT_LENGTH
from tests.support.http_edge import assert_problem

SUBJECTS = [
    pytest.param("auth0|5f7c8ec7c33c6c004bbafe82", id="Auth0"),
    pytest.param("google-oauth2|1234", id="Google via Auth0"),
    pytest.param("S" * MAX_SUBJECT_LENGTH, id="255 characters"),
    pytest.param("Ada Lovelace", id="a space"),
    pytest.param("user#42", id="a hash"),
    pytest.param("100%#PROFILE", id="percent and hash"),
    pytest.param("Jürgen-日本", id="non-ASCII"),
]


@pytest.mark.parametrize("subject", SUBJECTS)
def test_a_subject_of_any_printable_text_registers_orders_and_reads_back(
    commerce_api: ApiClient, admin: ApiClient, subject: str
) -> None:
    # given
    create_product(admin)
    caller = commerce_api.as_user(subject)

    # when
    registered = caller.post("/users", user_body())
    ordered = caller.post("/orders", order_body(line()), headers={"Idempotency-Key": "k#1"})

    # then
    assert (registered.status, ordered.status) == (201, 201), (registered.text, ordered.text)
    assert caller.get("/users/me").json["user_id"] == subject
    assert [o["order_id"] for o in caller.get("/users/me/orders").json["items"]] == [ordered.json["order_id"]]


@pytest.mark.parametrize(
    "subject",
    [
        pytest.param("S" * (MAX_SUBJECT_LENGTH + 1), id="256 characters"),
        pytest.param("line\nbreak", id="a control character"),
        pytest.param("zero\u200bwidth", id="a format character"),
    ],
)
def test_a_subject_that_cannot_be_a_user_id_answers_403_problem_and_writes_nothing(
    commerce_api: ApiClient, subject: str
) -> None:
    # when
    registered = commerce_api.as_user(subject).post("/users", user_body())
    ordered = commerce_api.as_user(subject).post("/orders", order_body(line()), headers={"Idempotency-Key": "k"})

    # then
    assert_problem(registered, 403)
    assert_problem(ordered, 403)
    assert registered.json["type"].endswith("/unusable-subject")
    assert table_items() == []


def test_a_subject_with_a_hash_cannot_replay_another_users_idempotency_record(
    commerce_api: ApiClient, admin: ApiClient
) -> None:
    # given: user "a" places an order with Idempotency-Key "b#c"
    create_product(admin)
    first = commerce_api.as_user("a").post("/orders", order_body(line()), headers={"Idempotency-Key": "b#c"})

    # when: user "a#b" sends key "c" (unescaped, both would be IDEMPOTENCY#a#b#c)
    second = commerce_api.as_user("a#b").post("/orders", order_body(line()), headers={"Idempotency-Key": "c"})

    # then
    assert (first.status, second.status) == (201, 201)
    assert "Idempotent-Replayed" not in second.headers
    assert second.json["order_id"] != first.json["order_id"]
    assert second.json["user_id"] == "a#b"
