"""Configuration of the commerce functions, one model per function (read by ``platform.config.settings``)."""

from typing import Annotated, Literal

from pydantic import Field

from shopfeed.platform.config import CursorSettings, OutboxSettings, OutboxSweeperSettings, Settings


class CommerceApiSettings(CursorSettings):
    commerce_table_name: Annotated[str, Field(min_length=3)]


class CommerceOutboxSettings(OutboxSettings):
    """What relaying or re-driving the commerce outbox needs."""

    commerce_table_name: Annotated[str, Field(min_length=3)]


class CommerceStreamSettings(CommerceOutboxSettings):
    # New payment attempts are handed to the payment worker through this queue.
    payment_queue_url: Annotated[str, Field(min_length=1)]


class CommerceSweeperSettings(OutboxSweeperSettings, CommerceOutboxSettings):
    pass


class PaymentWorkerSettings(Settings):
    commerce_table_name: Annotated[str, Field(min_length=3)]
    # Which PaymentProvider settles attempts (bootstrap.payment_provider). Only the sandbox ships; a
    # real provider's adapter adds its name here and its class there.
    payment_provider: Literal["sandbox"] = "sandbox"
