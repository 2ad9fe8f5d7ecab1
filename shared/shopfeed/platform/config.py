"""Validated configuration, one model per function, read lazily from the environment.

Nothing here runs at import time: functions call ``settings(SomeSettings)`` on first use, so a cold
start pays for it only once and tests can change the environment before the first call.
"""

import os
from functools import cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class Settings(BaseModel):
    """Base: fields are filled from upper-cased environment variables of the same name."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)


class CursorSettings(Settings):
    # Locally and in tests the secret is given directly; in AWS the stack generates it in Secrets
    # Manager and the function reads it once per container (see cursors.signing_keys).
    cursor_secret: str | None = None
    cursor_secret_arn: str | None = None


class OutboxSettings(Settings):
    """What a context's outbox relay needs besides its table (the context's settings add that)."""

    event_bus_name: Annotated[str, Field(min_length=1)]
    # How long a published outbox item is kept before TTL removes it.
    outbox_retention_days: Annotated[int, Field(ge=1, le=365)] = 7


class OutboxSweeperSettings(OutboxSettings):
    # Items unpublished for longer than this are re-driven; shorter than the stream's retry window
    # would publish twice for no reason, longer risks the 24 h stream retention.
    outbox_sweep_after_seconds: Annotated[int, Field(ge=10)] = 300


class SearchSettings(Settings):
    # Empty: the stack has no search engine; search answers 503 and the sync leaves records alone.
    search_endpoint: str | None = None
    search_signing_service: Literal["es", "aoss"] = "es"


class SearchSyncSettings(Settings):
    # Where a stream consumer queues its index writes for the search sync worker. Empty: the stack has
    # no search, and the consumer acknowledges what it would have queued.
    search_sync_queue_url: str | None = None


@cache
def settings[S: Settings](model: type[S]) -> S:
    """The function's settings, validated on first use and cached for the container's life."""
    values = {name: os.environ[name.upper()] for name in model.model_fields if name.upper() in os.environ}
    return model.model_validate(values)
