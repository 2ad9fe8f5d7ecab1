"""User use cases across both contexts, against the in-memory port."""

import pytest

from shopfeed.accounts import services
from shopfeed.feed.models import MAX_DISPLAY_NAME_LENGTH
from shopfeed.platform.errors import AlreadyExists, NotFound, StaleVersion
from shopfeed.platform.identity import Caller
from tests.unit.accounts_fakes import InMemoryAccounts
from tests.unit.fakes import InMemoryCommerce
from tests.unit.feed_fakes import InMemoryFeed


@pytest.fixture
def users() -> InMemoryAccounts:
    return InMemoryAccounts(InMemoryCommerce(), InMemoryFeed())


def test_registering_makes_both_halves_at_version_one(users: InMemoryAccounts, ada: Caller) -> None:
    # when
    customer, profile = services.register_user(users, ada, "ada@example.com", "Ada", "Ada_L", None, "Engines.")
    # then
    assert (customer.version, profile.version) == (1, 1)
    assert (profile.handle, profile.display_name, profile.bio) == ("ada_l", "Ada", "Engines.")
    assert users.get("U100") == (customer, profile)


def test_a_user_without_a_chosen_handle_gets_a_stable_one(users: InMemoryAccounts, ada: Caller) -> None:
    # when
    _, profile = services.register_user(users, ada, "ada@example.com", "Ada")
    # then
    assert profile.handle == services.default_handle("U100") != services.default_handle("U200")


def test_a_name_longer_than_a_display_name_defaults_the_display_name_to_its_start(
    users: InMemoryAccounts, ada: Caller
) -> None:
    # given: a name of the longest length registration accepts, past the display name's maximum
    name = "A" * 120

    # when
    customer, profile = services.register_user(users, ada, "ada@example.com", name)

    # then
    assert customer.name == name
    assert profile.display_name == name[:MAX_DISPLAY_NAME_LENGTH]


def test_a_taken_handle_registers_nothing(users: InMemoryAccounts, ada: Caller, bob: Caller) -> None:
    # given
    services.register_user(users, ada, "ada@example.com", "Ada", "ada")
    # when
    with pytest.raises(AlreadyExists) as refused:
        services.register_user(users, bob, "bob@example.com", "Bob", "ADA")
    # then
    assert refused.value.kind == "handle"
    assert users.get("U200") == (None, None)


def test_an_edit_changes_both_halves_under_one_version(users: InMemoryAccounts, ada: Caller) -> None:
    # given
    services.register_user(users, ada, "ada@example.com", "Ada")
    # when
    customer, profile = services.update_me(users, ada, 1, {"name": "Countess"}, {"bio": "Notes."})
    # then
    assert (customer.name, profile.bio, customer.version, profile.version) == ("Countess", "Notes.", 2, 2)
    with pytest.raises(StaleVersion):
        services.update_me(users, ada, 1, {}, {"bio": "late"})


def test_reading_an_unknown_user_is_not_found(users: InMemoryAccounts, ada: Caller) -> None:
    with pytest.raises(NotFound):
        services.read_user(users, ada, "U404")
