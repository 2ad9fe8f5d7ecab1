"""The customer, as commerce lets another context compose it: the user routes (``shopfeed.accounts``)
put these operations in their one transaction across both tables, and read a stored customer back with
``customer_from``. Keys and items stay commerce's own; this module is what it exposes of them.

Transaction labels are part of what it exposes: a cancelled registration names ``CUSTOMER`` or
``EMAIL`` as the item that failed.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from shopfeed.commerce import items, keys
from shopfeed.commerce.models import Customer
from shopfeed.platform import dynamo
from shopfeed.platform.dynamo import Update
from shopfeed.platform.errors import InvalidRequest
from shopfeed.platform.identity import Caller

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

CUSTOMER: Final = "customer"
EMAIL: Final = "email"


def new_customer(caller: Caller, email: str | None, name: str, now: str) -> Customer:
    """The caller as a new customer. The address is the token's verified ``email`` claim when it carries
    one (a different address in the body is refused); without one, the body's address is kept
    unverified: shown to its owner, but it claims nothing, so it cannot keep the real owner out."""
    if caller.verified_email is not None:
        if email not in (None, caller.verified_email):
            raise InvalidRequest("The email must be the verified address of your token (or be left out).")
        address = caller.verified_email
    elif email is None:
        raise InvalidRequest("Your token carries no verified email address: send one in the body.")
    else:
        address = email
    return Customer(
        user_id=caller.user_id,
        email=address,
        email_verified=caller.verified_email is not None,
        name=name,
        created_at=now,
        updated_at=now,
        version=1,
    )


def registration(table: dynamo.Table, customer: Customer) -> dict[str, "TransactWriteItemTypeDef"]:
    """The customer and, for a verified address, its unique-email guard, each put only if absent (an
    unverified address claims nothing, see ``new_customer``)."""
    ops = {CUSTOMER: table.put_op(items.customer_item(customer), if_absent=True)}
    if customer.email_verified:
        ops[EMAIL] = table.put_op(items.email_guard_item(customer), if_absent=True)
    return ops


def customer_key(user_id: str) -> keys.Key:
    return keys.user(user_id)


def customer_from(item: dynamo.Item) -> Customer:
    return items.customer_from(item)


def versioned_update(
    table: dynamo.Table, user_id: str, expected_version: int, changes: Mapping[str, Any], now: str
) -> "TransactWriteItemTypeDef":
    """``changes`` to the customer and its version bumped, if it is at ``expected_version`` (the item as
    it was comes back on failure: absent, or its version)."""
    return table.versioned_update_op(keys.user(user_id), expected_version, Update(set={**changes, "updated_at": now}))
