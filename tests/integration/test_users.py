"""POST /users, GET /users/{user_id} (ECOM-001), PATCH /users/me against moto."""

from local.harness.client import ApiClient
from local.harness.factories import if_match, register_user, user_body
from local.harness.tables import table_items
from shopfeed.commerce import items
from shopfeed.feed import items as feed_items
from tests.support.calls import dynamodb_calls


def test_register_creates_both_halves_of_me_and_their_guards_in_one_transaction(
    commerce_api: ApiClient,
) -> None:
    # given
    ada = commerce_api.as_user("U100", verified_email="Ada@Example.com")

    # when
    with dynamodb_calls() as calls:
        answer = ada.post("/users", {"name": "Ada", "handle": "Ada_L", "bio": "Engines."})

    # then
    assert answer.status == 201
    assert answer.json == {
        "user_id": "U100",
        "name": "Ada",
        "email": "ada@example.com",
        "created_at": answer.json["created_at"],
        "handle": "ada_l",
        "display_name": "Ada",
        "bio": "Engines.",
        "followers_count": 0,
        "following_count": 0,
        "posts_count": 0,
    }
    assert answer.headers["Location"] == "/users/U100"
    assert answer.headers["ETag"] == '"1"'
    assert answer.content_type == "application/json"
    assert calls.operations == ["TransactWriteItems"]
    assert sorted(i["entity_type"] for i in table_items()) == sorted([items.CUSTOMER, items.EMAIL_GUARD])
    assert sorted(i["entity_type"] for i in table_items("FeedTable")) == sorted(
        [feed_items.PROFILE, feed_items.HANDLE_GUARD]
    )


def test_register_rejects_a_handle_taken_whatever_its_case_and_writes_nothing(commerce_api: ApiClient) -> None:
    # given
    register_user(commerce_api, handle="ada")
    before = table_items() + table_items("FeedTable")

    # when
    answer = commerce_api.as_user("U200").post("/users", user_body() | {"handle": "ADA"})

    # then
    assert answer.status == 409
    assert (answer.json["resource"], answer.json["id"]) == ("handle", "ada")
    assert table_items() + table_items("FeedTable") == before


def test_register_rejects_a_second_registration_of_the_same_user(commerce_api: ApiClient) -> None:
    # given
    register_user(commerce_api)
    before = table_items()

    # when
    answer = commerce_api.post("/users", user_body())

    # then
    assert answer.status == 409
    assert answer.json["resource"] == "user"
    assert answer.json["id"] == "U100"
    assert table_items() == before


def test_register_rejects_a_verified_email_taken_by_another_user_whatever_its_case_naming_no_one(
    commerce_api: ApiClient,
) -> None:
    # given
    commerce_api.as_user("U100", verified_email="ada@example.com").post("/users", {"name": "Ada"})
    before = table_items()

    # when
    answer = commerce_api.as_user("U200", verified_email="ADA@example.com").post("/users", {"name": "Ada"})

    # then
    assert answer.status == 409
    assert answer.content_type == "application/problem+json"
    assert {k: v for k, v in answer.json.items() if k not in ("type", "title", "status", "detail")} == {
        "resource": "email"
    }
    assert "U100" not in answer.text
    assert table_items() == before
    assert commerce_api.get("/users/U200").status == 404


def test_an_address_written_in_the_body_cannot_keep_its_verified_owner_out(commerce_api: ApiClient) -> None:
    # given: a squatter's token has no verified email; he writes Ada's address in the body
    squatter = commerce_api.as_user("U666").post("/users", user_body(email="ada@example.com"))

    # when: Ada registers with the address her issuer verified
    ada = commerce_api.as_user("U100", verified_email="ada@example.com").post("/users", {"name": "Ada"})

    # then
    assert (squatter.status, ada.status) == (201, 201)
    assert ada.json["email"] == "ada@example.com"
    assert [i["entity_type"] for i in table_items() if i["entity_type"] == items.EMAIL_GUARD] == [items.EMAIL_GUARD]


def test_register_refuses_a_body_address_other_than_the_verified_one(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.as_user("U100", verified_email="ada@example.com").post(
        "/users", user_body(email="someone@example.com")
    )

    # then
    assert answer.status == 422
    assert table_items() == []


def test_register_rejects_a_malformed_body_with_field_locations_and_writes_nothing(
    commerce_api: ApiClient,
) -> None:
    # when
    answer = commerce_api.post("/users", {"email": "not-an-email", "name": "", "nickname": "x"})

    # then
    assert answer.status == 422
    assert answer.content_type == "application/problem+json"
    locations = {tuple(error["loc"]) for error in answer.json["errors"]}
    assert locations == {("body", "email"), ("body", "name"), ("body", "nickname")}
    assert table_items() == []


def test_get_user_shows_me_my_private_fields_and_etag_with_one_strong_read(commerce_api: ApiClient) -> None:
    # given
    me = register_user(commerce_api, email="ada@example.com")

    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.get("/users/U100")

    # then
    assert answer.status == 200
    assert answer.json == me
    assert answer.headers["ETag"] == '"1"'
    assert calls.operations == ["BatchGetItem"]  # CommerceTable and FeedTable in one request


def test_get_user_me_reads_the_caller(commerce_api: ApiClient) -> None:
    # given
    me = register_user(commerce_api)

    # when
    answer = commerce_api.get("/users/me")

    # then
    assert answer.status == 200
    assert answer.json == me


def test_get_user_hides_the_name_and_email_of_another_user(commerce_api: ApiClient) -> None:
    # given
    body = {"email": "grace@example.com", "name": "Grace Hopper", "display_name": "Amazing"}
    assert commerce_api.as_user("U200").post("/users", body).status == 201

    # when
    answer = commerce_api.get("/users/U200")

    # then: the social profile is public, the legal name and the address are not
    assert answer.status == 200
    assert (answer.json["name"], answer.json["email"]) == (None, None)
    assert "grace@example.com" not in answer.text
    assert "Grace Hopper" not in answer.text
    assert answer.json["display_name"] == "Amazing"


def test_get_user_shows_an_admin_the_email_of_another_user(commerce_api: ApiClient, admin: ApiClient) -> None:
    # given
    register_user(commerce_api, email="ada@example.com")

    # when
    answer = admin.get("/users/U100")

    # then
    assert answer.status == 200
    assert answer.json["email"] == "ada@example.com"
    assert answer.json["name"] is not None


def test_get_user_answers_404_problem_for_an_unknown_user(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.get("/users/U404")

    # then
    assert answer.status == 404
    assert answer.content_type == "application/problem+json"
    assert answer.json["id"] == "U404"


def test_update_me_with_the_current_etag_changes_the_profile_and_the_etag(commerce_api: ApiClient) -> None:
    # given
    register_user(commerce_api, name="Ada")
    etag = commerce_api.get("/users/me").headers["ETag"]

    # when
    with dynamodb_calls() as calls:
        answer = commerce_api.patch("/users/me", {"name": "Ada King"}, headers=if_match(etag))

    # then
    assert answer.status == 200
    assert answer.json["name"] == "Ada King"
    assert answer.headers["ETag"] == '"2"'
    assert calls.operations == ["TransactWriteItems", "BatchGetItem"]  # both halves, then read back
    assert commerce_api.get("/users/me").json["name"] == "Ada King"


def test_update_me_without_if_match_answers_428_and_changes_nothing(commerce_api: ApiClient) -> None:
    # given
    register_user(commerce_api, name="Ada")

    # when
    answer = commerce_api.patch("/users/me", {"name": "Ada King"})

    # then
    assert answer.status == 428
    assert answer.content_type == "application/problem+json"
    assert commerce_api.get("/users/me").json["name"] == "Ada"


def test_update_me_with_a_stale_etag_answers_412_with_the_current_version(commerce_api: ApiClient) -> None:
    # given
    register_user(commerce_api, name="Ada")
    commerce_api.patch("/users/me", {"name": "Ada King"}, headers=if_match('"1"'))

    # when
    answer = commerce_api.patch("/users/me", {"name": "Countess"}, headers=if_match('"1"'))

    # then
    assert answer.status == 412
    assert answer.json["current_version"] == 2
    assert commerce_api.get("/users/me").json["name"] == "Ada King"


def test_update_me_answers_404_when_i_have_not_registered(commerce_api: ApiClient) -> None:
    # when
    answer = commerce_api.patch("/users/me", {"name": "Ada"}, headers=if_match('"1"'))

    # then
    assert answer.status == 404
    assert table_items() == []


def test_update_me_rejects_fields_that_cannot_change_with_their_locations(commerce_api: ApiClient) -> None:
    # given
    register_user(commerce_api, email="ada@example.com")
    before = table_items()

    # when
    answer = commerce_api.patch("/users/me", {"email": "other@example.com"}, headers=if_match('"1"'))

    # then
    assert answer.status == 422
    assert [error["loc"] for error in answer.json["errors"]] == [["body", "email"]]
    assert table_items() == before
