"""User use cases spanning both contexts. No HTTP: callers pass plain values in."""

import hashlib
from typing import Any, Protocol

from shopfeed.commerce.models import Customer
from shopfeed.feed.models import MAX_DISPLAY_NAME_LENGTH, Profile
from shopfeed.platform.clock import iso, utc_now
from shopfeed.platform.errors import NotFound
from shopfeed.platform.identity import Caller


class Users(Protocol):
    """The storage port (accounts.repository.Accounts, or an in-memory fake in unit tests)."""

    def register(self, customer: Customer, profile: Profile) -> None: ...
    def get(self, user_id: str) -> tuple[Customer | None, Profile | None]: ...
    def update(
        self,
        user_id: str,
        expected_version: int,
        customer_changes: dict[str, Any],
        profile_changes: dict[str, Any],
        now: str,
    ) -> tuple[Customer, Profile]: ...


def default_handle(user_id: str) -> str:
    """The handle of a user who registers without choosing one: stable, and unlikely to be taken."""
    return "u_" + hashlib.sha256(user_id.encode()).hexdigest()[:12]


def register_user(
    users: Users,
    caller: Caller,
    email: str | None,
    name: str,
    handle: str | None = None,
    display_name: str | None = None,
    bio: str = "",
) -> tuple[Customer, Profile]:
    # Imported here: commerce.customers brings commerce's items and keys (the storage side), which the
    # composition root loads when it builds the repository (priming, decision 214), not the routes' import.
    from shopfeed.commerce.customers import new_customer

    now = iso(utc_now())
    customer = new_customer(caller, email, name, now)
    profile = Profile(
        user_id=caller.user_id,
        handle=handle or default_handle(caller.user_id),
        # A name may be longer than a display name: the default is its start (the user can change it).
        display_name=display_name or name[:MAX_DISPLAY_NAME_LENGTH],
        bio=bio,
        created_at=now,
        updated_at=now,
        version=1,
    )
    users.register(customer, profile)
    return customer, profile


def read_user(users: Users, caller: Caller, user_id: str) -> tuple[Customer, Profile | None, bool]:
    """Both halves, and whether the caller may see private fields (themself or an admin)."""
    customer, profile = users.get(user_id)
    if customer is None:
        raise NotFound("user", user_id)
    return customer, profile, caller.user_id == user_id or caller.is_admin


def update_me(
    users: Users,
    caller: Caller,
    expected_version: int,
    customer_changes: dict[str, Any],
    profile_changes: dict[str, Any],
) -> tuple[Customer, Profile]:
    return users.update(caller.user_id, expected_version, customer_changes, profile_changes, iso(utc_now()))
