"""A user across both tables (registration, FEED-001 with ECOM-001, the profile edit) against moto."""

import pytest

from local.harness import builders
from local.harness.feed_builders import profile
from local.harness.tables import table_items
from shopfeed.accounts.repository import Accounts
from shopfeed.commerce.models import Customer
from shopfeed.platform import clients, dynamo
from shopfeed.platform.errors import AlreadyExists, EmailInUse, NotFound, StaleVersion
from tests.support.calls import dynamodb_calls


@pytest.fixture
def accounts(aws: None) -> Accounts:
    client = clients.dynamodb()
    return Accounts(dynamo.Table(client, "CommerceTable"), dynamo.Table(client, "FeedTable"))


def customer(user_id: str, email: str | None = None) -> Customer:
    """A customer with a verified address (the only kind that claims it with a guard)."""
    return builders.customer(user_id, email=email).model_copy(update={"email_verified": True})


def everything() -> list[dict[str, object]]:
    return table_items("CommerceTable") + table_items("FeedTable")


def test_registration_writes_both_halves_and_both_guards_in_one_transaction(accounts: Accounts) -> None:
    # when
    with dynamodb_calls() as calls:
        accounts.register(customer("U100"), profile("U100", handle="ada"))
    # then
    assert calls.operations == ["TransactWriteItems"]
    assert sorted(str(i["entity_type"]) for i in everything()) == ["Customer", "EmailGuard", "HandleGuard", "Profile"]


@pytest.mark.parametrize(
    ("user_id", "email", "handle", "taken"),
    [
        ("U100", "other@example.com", "other", "user"),
        ("U200", "u100@example.com", "other", "email"),
        ("U200", "other@example.com", "ADA", "handle"),
    ],
)
def test_a_taken_user_email_or_handle_registers_nothing(
    accounts: Accounts, user_id: str, email: str, handle: str, taken: str
) -> None:
    # given
    accounts.register(customer("U100", email="u100@example.com"), profile("U100", handle="ada"))
    before = everything()
    # when
    with pytest.raises((AlreadyExists, EmailInUse)) as refused:
        accounts.register(customer(user_id, email=email), profile(user_id, handle=handle))
    # then
    assert getattr(refused.value, "kind", "email") == taken
    assert everything() == before


def test_a_user_is_read_from_both_tables_in_one_round_trip(accounts: Accounts) -> None:
    # given
    ada, social = customer("U100"), profile("U100", handle="ada")
    accounts.register(ada, social)
    # when
    with dynamodb_calls() as calls:
        found = accounts.get("U100")
    # then
    assert found == (ada, social)
    assert calls.operations == ["BatchGetItem"]
    assert accounts.get("U404") == (None, None)


def test_an_edit_changes_both_halves_and_keeps_their_versions_equal(accounts: Accounts) -> None:
    # given
    accounts.register(customer("U100"), profile("U100", handle="ada"))
    # when
    with dynamodb_calls() as calls:
        edited, social = accounts.update(
            "U100", 1, {"name": "Countess"}, {"bio": "Engines."}, "2026-03-05T11:00:00.000Z"
        )
    # then
    assert (edited.name, social.bio) == ("Countess", "Engines.")
    assert (edited.version, social.version) == (2, 2)
    assert calls.operations == ["TransactWriteItems", "BatchGetItem"]


def test_a_stale_or_unknown_edit_changes_nothing(accounts: Accounts) -> None:
    # given
    accounts.register(customer("U100"), profile("U100", handle="ada"))
    accounts.update("U100", 1, {}, {"bio": "first"}, "2026-03-05T11:00:00.000Z")
    before = everything()
    # then
    with pytest.raises(StaleVersion) as stale:
        accounts.update("U100", 1, {"name": "late"}, {"bio": "late"}, "2026-03-05T12:00:00.000Z")
    assert stale.value.current_version == 2
    with pytest.raises(NotFound):
        accounts.update("U404", 1, {}, {}, "2026-03-05T12:00:00.000Z")
    assert everything() == before
