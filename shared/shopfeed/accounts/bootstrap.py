"""The accounts' composition root: both tables, wired once per container."""

from functools import cache
from typing import Annotated

from pydantic import Field

from shopfeed.accounts.repository import Accounts
from shopfeed.platform import clients, dynamo
from shopfeed.platform.config import Settings, settings


class AccountsSettings(Settings):
    commerce_table_name: Annotated[str, Field(min_length=3)]
    feed_table_name: Annotated[str, Field(min_length=3)]


@cache
def accounts() -> Accounts:
    config = settings(AccountsSettings)
    client = clients.dynamodb()
    return Accounts(dynamo.Table(client, config.commerce_table_name), dynamo.Table(client, config.feed_table_name))


def reset() -> None:
    """Forget every port built (tests change the environment between tests)."""
    accounts.cache_clear()
