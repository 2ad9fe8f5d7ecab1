"""Customer use cases: register, read (private fields for self and admins), update with a version."""

from dataclasses import replace

import pytest

from shopfeed.commerce.orders import services
from shopfeed.platform.errors import AlreadyExists, EmailInUse, InvalidRequest, NotFound, StaleVersion
from shopfeed.platform.identity import Caller
from tests.unit.fakes import InMemoryCommerce


def test_registering_makes_the_caller_a_customer_at_version_one(store: InMemoryCommerce, ada: Caller) -> None:
    # when
    registered = services.register_customer(store, ada, "ada@example.com", "Ada Lovelace")
    # then
    assert (registered.user_id, registered.email, registered.version) == ("U100", "ada@example.com", 1)
    assert registered.created_at == registered.updated_at
    assert store.get_customer("U100") == registered


def test_registering_twice_is_refused(store: InMemoryCommerce, ada: Caller) -> None:
    # given
    services.register_customer(store, ada, "ada@example.com", "Ada Lovelace")
    # when
    with pytest.raises(AlreadyExists) as refused:
        services.register_customer(store, ada, "countess@example.com", "Ada")
    # then
    assert refused.value.kind == "user"


def test_a_verified_email_taken_by_another_account_is_refused_without_naming_it(store: InMemoryCommerce) -> None:
    # given
    services.register_customer(store, Caller("U100", frozenset(), "ada@example.com"), None, "Ada Lovelace")
    # when
    with pytest.raises(EmailInUse) as refused:
        services.register_customer(store, Caller("U200", frozenset(), "ada@example.com"), None, "Ada again")
    # then
    assert refused.value.extensions() == {"resource": "email"}
    assert "U100" not in refused.value.detail
    assert store.get_customer("U200") is None


def test_an_unverified_email_claims_nothing(store: InMemoryCommerce, ada: Caller, bob: Caller) -> None:
    # given: bob writes ada's address in his body; his token carries no verified email
    squatter = services.register_customer(store, bob, "ada@example.com", "Bob")
    # when: ada registers with the address her issuer verified
    owner = services.register_customer(store, replace(ada, verified_email="ada@example.com"), None, "Ada")
    # then
    assert (squatter.email_verified, owner.email_verified) == (False, True)
    assert owner.email == "ada@example.com"


def test_the_verified_email_wins_and_another_address_in_the_body_is_refused(store: InMemoryCommerce) -> None:
    # given
    ada = Caller("U100", frozenset(), "ada@example.com")
    # when
    with pytest.raises(InvalidRequest):
        services.register_customer(store, ada, "someone@example.com", "Ada")
    # then
    assert store.get_customer("U100") is None


def test_without_a_verified_email_the_body_must_carry_one(store: InMemoryCommerce, ada: Caller) -> None:
    with pytest.raises(InvalidRequest):
        services.register_customer(store, ada, None, "Ada")


@pytest.mark.parametrize(
    ("reader", "private"), [("ada", True), ("admin", True), ("bob", False)], ids=["self", "admin", "someone-else"]
)
def test_private_fields_are_for_the_customer_and_admins_only(
    store: InMemoryCommerce, ada: Caller, reader: str, private: bool, request: pytest.FixtureRequest
) -> None:
    # given
    registered = services.register_customer(store, ada, "ada@example.com", "Ada Lovelace")
    # when
    customer, may_see_private = services.read_customer(store, request.getfixturevalue(reader), "U100")
    # then
    assert (customer, may_see_private) == (registered, private)


def test_reading_an_unknown_customer_is_not_found(store: InMemoryCommerce, ada: Caller) -> None:
    with pytest.raises(NotFound) as refused:
        services.read_customer(store, ada, "U404")
    assert (refused.value.kind, refused.value.ident) == ("user", "U404")


def test_updating_my_profile_at_the_version_i_read_bumps_it(store: InMemoryCommerce, ada: Caller) -> None:
    # given
    services.register_customer(store, ada, "ada@example.com", "Ada Lovelace")
    # when
    updated = services.update_my_profile(store, ada, 1, {"name": "Countess of Lovelace"})
    # then
    assert (updated.name, updated.version, updated.email) == ("Countess of Lovelace", 2, "ada@example.com")
    assert updated.updated_at >= updated.created_at


def test_updating_my_profile_at_an_old_version_is_stale(store: InMemoryCommerce, ada: Caller) -> None:
    # given
    services.register_customer(store, ada, "ada@example.com", "Ada Lovelace")
    current = services.update_my_profile(store, ada, 1, {"name": "Countess of Lovelace"})
    # when
    with pytest.raises(StaleVersion) as refused:
        services.update_my_profile(store, ada, 1, {"name": "Ada"})
    # then
    assert refused.value.current_version == 2
    assert store.get_customer("U100") == current


def test_updating_my_profile_before_registering_is_not_found(store: InMemoryCommerce, ada: Caller) -> None:
    with pytest.raises(NotFound):
        services.update_my_profile(store, ada, 1, {"name": "Ada"})
