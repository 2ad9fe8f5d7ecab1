"""The caller, from the JWT claims API Gateway's authorizer verified (payload 2.0 request context)."""

from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

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
    ],
)
def test_groups_are_read_in_every_shape_authorizers_send(groups: object) -> None:
    caller = caller_from_request_context(context_with({"sub": "U1", "cognito:groups": groups}))
    assert caller.groups == {ADMIN, OPS}
    assert caller.is_admin
    assert caller.is_ops


@pytest.mark.parametrize(
    "groups",
    [
        pytest.param(["readers,admin"], id="comma-in-a-name"),
        pytest.param(["readers admin"], id="space-in-a-name"),
        pytest.param(["[admin]"], id="brackets-in-a-name"),
        pytest.param(["admin "], id="trailing-space"),
        pytest.param([" admin"], id="leading-space"),
        pytest.param(["admin\u200b"], id="invisible-character"),
        pytest.param(["Admin"], id="other-case"),
        pytest.param(["a" * 129], id="too-long"),
        pytest.param([["admin"]], id="nested-array"),
        pytest.param("[readers,admin]", id="string-comma-in-a-name"),
        pytest.param("[[admin]]", id="string-brackets-in-a-name"),
        pytest.param("[admin ]", id="string-trailing-space"),
        pytest.param("[readers  admin]", id="string-doubled-space"),
        pytest.param("readers,admin", id="string-comma-list"),
        pytest.param("readers admin", id="string-unbracketed-space"),
        pytest.param("[admin, readers]", id="string-comma-space-list"),
        pytest.param({"admin": True}, id="object"),
    ],
)
def test_a_group_claim_that_is_not_well_formed_grants_nothing(groups: object) -> None:
    caller = caller_from_request_context(context_with({"sub": "U1", "cognito:groups": groups}))
    assert (caller.is_admin, caller.is_ops) == (False, False)


def test_a_name_holding_another_groups_name_is_only_itself() -> None:
    listed = caller_from_request_context(context_with({"sub": "U1", "cognito:groups": ["ops", "readers,admin"]}))
    as_the_authorizer_writes_it = caller_from_request_context(
        context_with({"sub": "U1", "cognito:groups": "[ops readers,admin]"})
    )
    assert listed.groups == as_the_authorizer_writes_it.groups == {"ops", "readers,admin"}
    assert (listed.is_ops, listed.is_admin) == (True, False)


def bearer(claims: dict[str, Any]) -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return "Bearer " + jwt.encode(claims, key, algorithm="RS256")


def stringified(claims: dict[str, Any]) -> dict[str, Any]:
    """The claims as HTTP API's authorizer hands them on: arrays joined by spaces in brackets."""
    return {k: "[" + " ".join(v) + "]" if isinstance(v, list) else str(v) for k, v in claims.items()}


def test_groups_come_from_the_verified_token_where_its_string_form_is_ambiguous() -> None:
    # given: one group whose name has a space; the authorizer writes it as it would write two groups
    claims = {"sub": "U1", "iat": 1_700_000_000, "exp": 1_700_003_600, "cognito:groups": ["readers admin"]}
    # when
    caller = caller_from_request_context(context_with(stringified(claims)), bearer(claims))
    # then
    assert stringified(claims)["cognito:groups"] == "[readers admin]"
    assert (caller.is_admin, caller.groups) == (False, frozenset())


def test_the_tokens_groups_count_only_when_it_is_the_token_the_claims_came_from() -> None:
    verified = {"sub": "U1", "iat": 1_700_000_000, "exp": 1_700_003_600, "cognito:groups": ["ops"]}
    other = verified | {"sub": "U2", "cognito:groups": ["admin"]}
    # when: a header holding another token than the one the authorizer verified
    caller = caller_from_request_context(context_with(stringified(verified)), bearer(other))
    # then
    assert caller.groups == {"ops"}
    assert caller_from_request_context(context_with(stringified(verified)), "Bearer not-a-token").groups == {"ops"}


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
