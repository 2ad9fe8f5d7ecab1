"""A new customer from the caller's token and the body: which address it keeps, and whether it is verified.

Registration itself (both halves, unique email and handle, versioned edits) is the user routes':
tests/unit/test_accounts.py and tests/integration/test_users.py.
"""

import pytest

from shopfeed.commerce.customers import new_customer
from shopfeed.platform.errors import InvalidRequest
from shopfeed.platform.identity import Caller

NOW = "2026-03-05T10:00:00.000000Z"
VERIFIED = Caller("U100", frozenset(), "ada@example.com")
UNVERIFIED = Caller("U100", frozenset())


def test_a_new_customer_is_the_caller_at_version_one() -> None:
    customer = new_customer(VERIFIED, None, "Ada Lovelace", NOW)
    assert (customer.user_id, customer.name, customer.version) == ("U100", "Ada Lovelace", 1)
    assert customer.created_at == customer.updated_at == NOW


@pytest.mark.parametrize("body_email", [None, "ada@example.com"])
def test_the_tokens_verified_email_is_the_customers_and_is_verified(body_email: str | None) -> None:
    customer = new_customer(VERIFIED, body_email, "Ada", NOW)
    assert (customer.email, customer.email_verified) == ("ada@example.com", True)


def test_another_address_in_the_body_than_the_verified_one_is_refused() -> None:
    with pytest.raises(InvalidRequest) as refused:
        new_customer(VERIFIED, "someone@example.com", "Ada", NOW)
    assert "verified address" in refused.value.detail


def test_without_a_verified_email_the_bodys_address_is_kept_unverified() -> None:
    customer = new_customer(UNVERIFIED, "ada@example.com", "Ada", NOW)
    assert (customer.email, customer.email_verified) == ("ada@example.com", False)


def test_without_a_verified_email_the_body_must_carry_one() -> None:
    with pytest.raises(InvalidRequest):
        new_customer(UNVERIFIED, None, "Ada", NOW)
