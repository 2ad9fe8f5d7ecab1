"""The Cognito post-confirmation trigger (functions/user_signup) registers the user as POST /users does,
against moto: once, whatever Cognito retries, and never failing a confirmation for a conflict."""

import copy
import json
from typing import Any

import pytest

from local import cfn
from local.harness.client import ApiClient
from local.harness.tables import table_items
from shopfeed.accounts.services import default_handle

SAMPLE = json.loads((cfn.ROOT / "events" / "cognito" / "post_confirmation.json").read_text())
SUB = SAMPLE["request"]["userAttributes"]["sub"]


def confirmation(**attributes: str | None) -> dict[str, Any]:
    """The sample confirmation (Cognito's documented event), with some attributes changed or removed."""
    event: dict[str, Any] = copy.deepcopy(SAMPLE)
    user = event["request"]["userAttributes"]
    for name, value in attributes.items():
        if value is None:
            user.pop(name, None)
        else:
            user[name] = value
    event["userName"] = user["sub"]
    return event


def confirm(event: dict[str, Any]) -> dict[str, Any]:
    from functions.user_signup.app import lambda_handler

    answer: dict[str, Any] = lambda_handler(event, _Context())
    return answer


class _Context:
    function_name = "UserSignUpFunction"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:UserSignUpFunction"
    aws_request_id = "signup-test"


def everything() -> list[dict[str, object]]:
    return sorted(table_items("CommerceTable") + table_items("FeedTable"), key=lambda item: str(item["PK"]))


def test_a_confirmed_sign_up_can_read_its_user_and_post_at_once(commerce_api: ApiClient) -> None:
    # when Cognito confirms the sample sign-up
    answer = confirm(confirmation())

    # then the trigger answers the event back, as Cognito expects
    assert answer == SAMPLE
    # and the user exists in both contexts, with the verified address, the name and the asked handle
    me = commerce_api.as_user(SUB).get(f"/users/{SUB}")
    assert me.status == 200
    assert me.json["email"] == "ada@example.com"
    assert me.json["name"] == "Ada Lovelace"
    assert me.json["handle"] == "ada_l"
    assert sorted(str(i["entity_type"]) for i in everything()) == ["Customer", "EmailGuard", "HandleGuard", "Profile"]
    # and the feed takes their first post (a post needs the profile)
    from functions.feed_api.app import lambda_handler as feed_api

    posted = ApiClient(feed_api, sub=SUB).post("/posts", {"text": "hello"}, headers={"Idempotency-Key": "first"})
    assert posted.status == 201


def test_a_retried_confirmation_changes_nothing(aws: None) -> None:
    # given a confirmation Cognito already delivered
    confirm(confirmation())
    before = everything()

    # when Cognito delivers it again
    confirm(confirmation())

    # then nothing is written twice and nothing fails
    assert everything() == before


def test_a_user_who_registered_with_post_users_first_keeps_their_records(commerce_api: ApiClient) -> None:
    # given a client that called POST /users right after sign-up, with its own handle
    client = commerce_api.as_user(SUB, verified_email="ada@example.com")
    assert client.post("/users", {"name": "Ada King", "handle": "countess"}).status == 201
    before = everything()

    # when the confirmation's trigger runs afterwards
    confirm(confirmation())

    # then it succeeds and the user's own registration stands
    assert everything() == before
    assert client.get("/users/me").json["handle"] == "countess"


def test_a_taken_handle_falls_back_to_the_default_one(commerce_api: ApiClient) -> None:
    # given another user holds the handle the sign-up asks for
    other = commerce_api.as_user("U-OTHER", verified_email="other@example.com")
    assert other.post("/users", {"name": "Other", "handle": "ada_l"}).status == 201

    # when the sign-up is confirmed
    confirm(confirmation())

    # then the user is registered, with the default handle
    me = commerce_api.as_user(SUB).get("/users/me")
    assert me.json["handle"] == default_handle(SUB)


def test_an_address_verified_by_another_account_is_kept_unverified(commerce_api: ApiClient) -> None:
    # given a user of another issuer verified the same address first
    other = commerce_api.as_user("U-OTHER", verified_email="ada@example.com")
    assert other.post("/users", {"name": "Other"}).status == 201

    # when the sign-up is confirmed
    confirm(confirmation())

    # then the user is registered; the address is theirs to see, but it claims nothing
    me = commerce_api.as_user(SUB).get("/users/me")
    assert me.status == 200
    assert me.json["email"] == "ada@example.com"
    items = table_items("CommerceTable")
    (customer,) = [i for i in items if i["entity_type"] == "Customer" and i.get("user_id") == SUB]
    assert customer["email_verified"] is False
    # and the address's one guard is still the other account's
    assert [i["user_id"] for i in items if i["entity_type"] == "EmailGuard"] == ["U-OTHER"]


def test_a_handle_and_an_address_both_taken_fall_back_together(commerce_api: ApiClient) -> None:
    # given another account holds both the asked handle and the verified address
    other = commerce_api.as_user("U-OTHER", verified_email="ada@example.com")
    assert other.post("/users", {"name": "Other", "handle": "ada_l"}).status == 201

    # when the sign-up is confirmed
    confirm(confirmation())

    # then the user is registered with the default handle and an address that claims nothing
    me = commerce_api.as_user(SUB).get("/users/me")
    assert (me.status, me.json["handle"]) == (200, default_handle(SUB))
    guards = [i for i in table_items("CommerceTable") + table_items("FeedTable") if "Guard" in str(i["entity_type"])]
    assert sorted(str(i["entity_type"]) for i in guards) == ["EmailGuard", "HandleGuard", "HandleGuard"]


@pytest.mark.parametrize(
    ("attributes", "name", "handle"),
    [
        ({"name": None, "preferred_username": None}, "ada", default_handle(SUB)),
        ({"name": None, "given_name": "Ada", "family_name": "Byron"}, "Ada Byron", "ada_l"),
        ({"name": "  Ada\n Lovelace ", "preferred_username": "no spaces allowed"}, "Ada Lovelace", default_handle(SUB)),
    ],
    ids=["only-an-address", "given-and-family-names", "multi-line-name-and-invalid-handle"],
)
def test_a_sign_up_without_a_name_or_a_usable_handle_gets_defaults(
    commerce_api: ApiClient, attributes: dict[str, str | None], name: str, handle: str
) -> None:
    # when a sign-up with fewer attributes is confirmed
    confirm(confirmation(**attributes))

    # then the name and handle are derived
    me = commerce_api.as_user(SUB).get("/users/me").json
    assert (me["name"], me["handle"]) == (name, handle)


def test_a_password_reset_confirmation_registers_nobody(aws: None) -> None:
    # when the trigger fires for a forgotten password's confirmation
    event = confirmation()
    event["triggerSource"] = "PostConfirmation_ConfirmForgotPassword"
    assert confirm(event) == event

    # then nothing is written
    assert everything() == []
