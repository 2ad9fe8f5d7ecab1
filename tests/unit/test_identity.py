"""The caller, from the JWT claims API Gateway's authorizer verified (payload 2.0 request context)."""

from typing import Any

import pytest

from shopfeed.platform.errors import Forbidden, Unauthenticated, UnusableSubject
from shopfeed.platform.identity import ADMIN, OPS, Caller, caller_from_request_context


def context_with(claims: dict[str, Any] | None) -> dict[str, Any]:
    return {"authorizer": {"jwt": {"claims": claims, "scopes": None}}}


def test_the_caller_is_the_tokens_subject() -> None:
    caller = caller_from_request_context(context_with({"sub": "U100"}))
    assert caller == Caller(user_id="U100", groups=frozenset())


@pytest.mark.parametrize(
    "context",
    [
        pytest.param({}, id="no-authorizer"),
        pytest.param({"authorizer": None}, id="null-authorizer"),
        pytest.param({"authorizer": {"jwt": None}}, id="no-jwt"),
        pytest.param(context_with(None), id="no-claims"),
        pytest.param(context_with({"cognito:groups": "[admin]"}), id="no-sub"),
        pytest.param(context_with({"sub": ""}), id="empty-sub"),
    ],
)
def test_a_request_without_a_subject_is_unauthenticated(context: dict[str, Any]) -> None:
    with pytest.raises(Unauthenticated):
        caller_from_request_context(context)


@pytest.mark.parametrize(
    "groups",
    [
        pytest.param(["admin", "ops"], id="list"),
        pytest.param("[admin ops]", id="http-api-bracketed-string"),
        pytest.param("admin,ops", id="comma-string"),
        pytest.param("[admin, ops]", id="bracketed-comma-string"),
    ],
)
def test_groups_are_read_in_every_shape_authorizers_send(groups: object) -> None:
    caller = caller_from_request_context(context_with({"sub": "U1", "cognito:groups": groups}))
    assert caller.groups == {ADMIN, OPS}
    assert caller.is_admin
    assert caller.is_ops


def test_a_plain_groups_claim_is_read_when_there_is_no_cognito_one() -> None:
    caller = caller_from_request_context(context_with({"sub": "U1", "groups": "[ops]"}))
    assert (caller.is_ops, caller.is_admin) == (True, False)


@pytest.mark.parametrize("groups", ["[]", "", []], ids=["empty-brackets", "empty-string", "empty-list"])
def test_no_groups_means_a_plain_user(groups: object) -> None:
    caller = caller_from_request_context(context_with({"sub": "U1", "cognito:groups": groups}))
    assert caller.groups == frozenset()


def test_requiring_a_group_the_caller_lacks_is_forbidden() -> None:
    # given
    caller = Caller(user_id="U1", groups=frozenset({OPS}))
    # when
    caller.require(OPS, "list orders by status")
    with pytest.raises(Forbidden) as refused:
        caller.require(ADMIN, "manage the catalog")
    # then
    assert "manage the catalog" in refused.value.detail


@pytest.mark.parametrize(
    "subject",
    ["auth0|5f7c8ec7c33c6c004bbafe82", "google-oauth2|1234", "Ada Lovelace", "user#42", "Jürgen", "S" * 255],
)
def test_any_printable_subject_up_to_255_characters_is_a_user_id(subject: str) -> None:
    assert caller_from_request_context(context_with({"sub": subject})).user_id == subject


@pytest.mark.parametrize("subject", ["S" * 256, "tab\there", "nul\x00", "zero\u200bwidth", "line\u2028sep"])
def test_a_subject_that_cannot_be_a_user_id_is_refused_with_the_reason(subject: str) -> None:
    with pytest.raises(UnusableSubject) as refused:
        caller_from_request_context(context_with({"sub": subject}))
    assert "cannot be used as a user id" in refused.value.detail


@pytest.mark.parametrize(
    ("claims", "verified"),
    [
        pytest.param({"email": "Ada@Example.com", "email_verified": "true"}, "ada@example.com", id="as a string"),
        pytest.param({"email": "ada@example.com", "email_verified": True}, "ada@example.com", id="as a boolean"),
        pytest.param({"email": "ada@example.com", "email_verified": "false"}, None, id="not verified"),
        pytest.param({"email": "ada@example.com"}, None, id="no verification claim"),
        pytest.param({"email_verified": "true"}, None, id="no email"),
        pytest.param({"email": "not-an-address", "email_verified": "true"}, None, id="not an address"),
    ],
)
def test_only_an_email_the_issuer_verified_is_the_callers(claims: dict[str, Any], verified: str | None) -> None:
    assert caller_from_request_context(context_with({"sub": "U100", **claims})).verified_email == verified
