"""The caller, from the JWT claims API Gateway's authorizer verified (payload 2.0 request context)."""

from typing import Any

import pytest

from shopfeed.platform.errors import Forbidden, Unauthenticated
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
