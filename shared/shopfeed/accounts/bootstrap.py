"""The accounts' composition root: both tables, wired once per container."""

from functools import cache
from typing import TYPE_CHECKING

from shopfeed.platform import clients
from shopfeed.platform.config import settings

# The settings and the repository are imported inside the factories that build them, as the commerce
# composition root does (decision 214): the commerce API imports this module, and its priming (or the
# first users request) builds them.
if TYPE_CHECKING:
    from shopfeed.accounts.repository import Accounts
    from shopfeed.platform import dynamo


@cache
def tables() -> "tuple[dynamo.Table, dynamo.Table]":
    """CommerceTable and FeedTable, as the user routes read and write them together."""
    from shopfeed.accounts.settings import AccountsSettings
    from shopfeed.platform import dynamo

    config = settings(AccountsSettings)
    client = clients.dynamodb()
    return dynamo.Table(client, config.commerce_table_name), dynamo.Table(client, config.feed_table_name)


@cache
def accounts() -> "Accounts":
    # Imported here, as the commerce repositories (decision 214): the repository brings both
    # contexts' items and keys, which priming (or the first users request) loads, not the import.
    from shopfeed.accounts.repository import Accounts

    return Accounts(*tables())


def reset() -> None:
    """Forget every port built (tests change the environment between tests)."""
    accounts.cache_clear()
    tables.cache_clear()
