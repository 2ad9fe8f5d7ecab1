"""The social profile, as the feed lets another context compose it: the user routes
(``shopfeed.accounts``) put these operations in their one transaction across both tables, and read a
stored profile back with ``profile_from``. Keys and items stay the feed's own; this module is what it
exposes of them.

Transaction labels are part of what it exposes: a cancelled registration names ``PROFILE`` or
``HANDLE`` as the item that failed.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from shopfeed.feed import items, keys
from shopfeed.feed.models import Profile
from shopfeed.platform import dynamo
from shopfeed.platform.dynamo import Update

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

PROFILE: Final = "profile"
HANDLE: Final = "handle"


def registration(table: dynamo.Table, profile: Profile) -> dict[str, "TransactWriteItemTypeDef"]:
    """The profile and its unique-handle guard, each put only if absent."""
    return {
        PROFILE: table.put_op(items.profile_item(profile), if_absent=True),
        HANDLE: table.put_op(items.handle_guard_item(profile), if_absent=True),
    }


def profile_key(user_id: str) -> keys.Key:
    return keys.profile(user_id)


def profile_from(item: dynamo.Item) -> Profile:
    return items.profile_from(item)


def versioned_update(
    table: dynamo.Table, user_id: str, expected_version: int, changes: Mapping[str, Any], now: str
) -> "TransactWriteItemTypeDef":
    """``changes`` to the profile and its version bumped, if it is at ``expected_version`` (the item as it
    was comes back on failure: absent, or its version). The counters are the stream consumer's: a
    profile edit never touches them, so they are not in ``changes``."""
    return table.versioned_update_op(
        keys.profile(user_id), expected_version, Update(set={**changes, "updated_at": now})
    )
