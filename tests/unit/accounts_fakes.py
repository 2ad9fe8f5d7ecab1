"""The ``Users`` port in memory: both halves of a user kept by the two contexts' fakes.

Every write checks both halves before it changes either, as the one DynamoDB transaction does.
tests/integration/test_accounts.py shows the same behaviour on the real tables.
"""

from typing import Any

from shopfeed.commerce.models import Customer
from shopfeed.feed.models import Profile
from shopfeed.platform.errors import AlreadyExists, NotFound, StaleVersion
from tests.unit.fakes import InMemoryCommerce
from tests.unit.feed_fakes import InMemoryFeed


class InMemoryAccounts:
    def __init__(self, commerce: InMemoryCommerce, feed: InMemoryFeed) -> None:
        self.commerce, self.feed = commerce, feed

    def register(self, customer: Customer, profile: Profile) -> None:
        if self.commerce.get_customer(customer.user_id) or self.feed.get_profile(profile.user_id):
            raise AlreadyExists("user", customer.user_id)
        if self.commerce.email_owner(customer.email) is not None:
            raise AlreadyExists("email", customer.email)
        if self.feed.handle_owner(profile.handle) is not None:
            raise AlreadyExists("handle", profile.handle)
        self.commerce.add_customer(customer)
        self.feed.add_profile(profile)

    def get(self, user_id: str) -> tuple[Customer | None, Profile | None]:
        return self.commerce.get_customer(user_id), self.feed.get_profile(user_id)

    def update(
        self,
        user_id: str,
        expected_version: int,
        customer_changes: dict[str, Any],
        profile_changes: dict[str, Any],
        now: str,
    ) -> tuple[Customer, Profile]:
        customer, profile = self.get(user_id)
        if customer is None or profile is None:
            raise NotFound("user", user_id)
        if customer.version != expected_version:
            raise StaleVersion("user", user_id, customer.version)
        return (
            self.commerce.update_customer(user_id, expected_version, customer_changes, now),
            self.feed.update_profile(user_id, expected_version, profile_changes, now),
        )
