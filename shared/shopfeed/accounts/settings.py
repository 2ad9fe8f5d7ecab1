"""Configuration of the accounts (read by ``platform.config.settings``): both tables, as the user routes
and the signup trigger read and write them together."""

from typing import Annotated

from pydantic import Field

from shopfeed.platform.config import Settings


class AccountsSettings(Settings):
    commerce_table_name: Annotated[str, Field(min_length=3)]
    feed_table_name: Annotated[str, Field(min_length=3)]
