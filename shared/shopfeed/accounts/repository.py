"""One user, two contexts: the customer (CommerceTable) and the social profile (FeedTable).

- Registration writes both, with the unique-email and unique-handle guards, in one TransactWriteItems
  (a transaction may span tables of one account and region): no user exists in one context only.
- ``GET /users/{user_id}`` reads both with one BatchGetItem (ECOM-001 and FEED-001 in one round trip).
- ``PATCH /users/me`` updates both in one transaction, each conditioned on the version the client
  read. The two versions start at 1 and only this transaction bumps them (the feed's counters do not),
  so they stay equal and one ETag stands for the user.

Each context exposes the operations (``commerce.customers``, ``feed.profiles``); this module only puts
them in one request and reads the cancellation reasons by their labels.
"""

import random
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from shopfeed.commerce import customers
from shopfeed.commerce.models import Customer
from shopfeed.feed import profiles
from shopfeed.feed.models import Profile
from shopfeed.platform import dynamo
from shopfeed.platform.dynamo import Transaction
from shopfeed.platform.errors import AlreadyExists, EmailInUse, NotFound, StaleVersion

if TYPE_CHECKING:
    pass

_BATCH_ATTEMPTS: Final = 8


class Accounts:
    def __init__(self, commerce: dynamo.Table, feed: dynamo.Table) -> None:
        self._commerce = commerce
        self._feed = feed

    def register(self, customer: Customer, profile: Profile) -> None:
        """Customer, email guard, profile and handle guard: all four or none."""
        transaction = Transaction()
        ops = {**customers.registration(self._commerce, customer), **profiles.registration(self._feed, profile)}
        for label, op in ops.items():
            transaction.add(label, op)
        try:
            self._commerce.transact(transaction, busy=f"user {customer.user_id}")
        except dynamo.TransactionCancelled as cancelled:
            if cancelled.failed(customers.CUSTOMER) or cancelled.failed(profiles.PROFILE):
                raise AlreadyExists("user", customer.user_id) from cancelled
            if cancelled.failed(customers.EMAIL):
                raise EmailInUse() from cancelled
            if cancelled.failed(profiles.HANDLE):
                raise AlreadyExists("handle", profile.handle) from cancelled
            raise

    def get(self, user_id: str) -> tuple[Customer | None, Profile | None]:
        """Both halves of a user in one BatchGetItem, strongly consistent."""
        found = self._batch_get(
            {
                self._commerce.name: customers.customer_key(user_id),
                self._feed.name: profiles.profile_key(user_id),
            }
        )
        customer = found.get(self._commerce.name)
        profile = found.get(self._feed.name)
        return (
            customers.customer_from(customer) if customer else None,
            profiles.profile_from(profile) if profile else None,
        )

    def update(
        self,
        user_id: str,
        expected_version: int,
        customer_changes: Mapping[str, Any],
        profile_changes: Mapping[str, Any],
        now: str,
    ) -> tuple[Customer, Profile]:
        """Both halves updated and their versions bumped together, if both are at ``expected_version``;
        then read back (TransactWriteItems returns no item): two round trips."""
        transaction = Transaction()
        transaction.add(
            customers.CUSTOMER,
            customers.versioned_update(self._commerce, user_id, expected_version, customer_changes, now),
        )
        transaction.add(
            profiles.PROFILE, profiles.versioned_update(self._feed, user_id, expected_version, profile_changes, now)
        )
        try:
            self._commerce.transact(transaction, busy=f"user {user_id}")
        except dynamo.TransactionCancelled as cancelled:
            failed = cancelled.failed_labels()
            if failed:
                current = next(iter(failed.values())).item
                if current is None:
                    raise NotFound("user", user_id) from cancelled
                raise StaleVersion("user", user_id, int(current["version"])) from cancelled
            raise
        customer, profile = self.get(user_id)
        if customer is None or profile is None:
            raise NotFound("user", user_id)  # only if it was deleted in between: users are never deleted
        return customer, profile

    def _batch_get(self, key_by_table: Mapping[str, Mapping[str, str]]) -> dict[str, dynamo.Item]:
        # Table.get_many serves one table; this one request spans two. Unprocessed keys are asked again.
        pending: dict[str, Any] = {
            table: {"Keys": [dynamo.serialize(key)], "ConsistentRead": True} for table, key in key_by_table.items()
        }
        found: dict[str, dynamo.Item] = {}
        for attempt in range(_BATCH_ATTEMPTS):
            if attempt:
                time.sleep(random.uniform(0, 0.01 * 2**attempt))
            response = self._commerce.client.batch_get_item(RequestItems=pending)
            for table, raw in response["Responses"].items():
                found.update((table, dynamo.deserialize(item)) for item in raw)
            pending = dict(response.get("UnprocessedKeys") or {})
            if not pending:
                return found
        raise dynamo.TableBusy(", ".join(pending))
