"""Items past their TTL that DynamoDB has not deleted yet.

TTL deletes an expired item within a few days, not at the second (up to about 48 hours, seeds 000 and
004): until then Queries and GetItems still return it. Every read that can meet an item with
``expires_at`` (the tables' TTL attribute) drops those whose time has passed, here in the application:
a FilterExpression would too, but it is applied after Limit and would end pages early on its own terms.
"""

from collections.abc import Mapping
from typing import Any, Final

from shopfeed.platform.clock import epoch_seconds, utc_now

TTL_ATTRIBUTE: Final = "expires_at"


def now_epoch() -> int:
    return epoch_seconds(utc_now())


def expired(raw: Mapping[str, Any], now: int) -> bool:
    """Whether a wire-format item (``{"expires_at": {"N": "..."}}``) is past its TTL at ``now``."""
    ttl = raw.get(TTL_ATTRIBUTE)
    return isinstance(ttl, Mapping) and "N" in ttl and int(ttl["N"]) <= now
