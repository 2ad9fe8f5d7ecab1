"""Configuration of the commerce functions, one model per function (read by ``platform.config.settings``)."""

from typing import Annotated

from pydantic import Field

from shopfeed.platform.config import CursorSettings, OutboxSettings, OutboxSweeperSettings


class CommerceApiSettings(CursorSettings):
    commerce_table_name: Annotated[str, Field(min_length=3)]


class CommerceStreamSettings(OutboxSettings):
    commerce_table_name: Annotated[str, Field(min_length=3)]


class CommerceSweeperSettings(OutboxSweeperSettings, CommerceStreamSettings):
    pass
