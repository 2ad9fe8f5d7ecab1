"""Server-made ids and timestamps: ULIDs (time-sortable) and ISO-8601 UTC strings."""

import hashlib
from datetime import UTC, datetime

from ulid import ULID


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """ISO-8601 UTC with millisecond precision and a Z suffix: sorts as text in time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def new_id(moment: datetime | None = None) -> str:
    """A ULID: 26 characters, lexicographically sortable by creation time."""
    return str(ULID.from_datetime(moment) if moment else ULID())


def epoch_seconds(moment: datetime) -> int:
    return int(moment.timestamp())


def derived_id(moment: str, cause: str) -> str:
    """A ULID made from what caused it: the time of ``moment`` (ISO-8601) and a hash of ``cause``, so the
    same cause always makes the same id (a retried write puts the same item, never a second one)."""
    milliseconds = int(datetime.fromisoformat(moment).timestamp() * 1000)
    return str(ULID.from_bytes(milliseconds.to_bytes(6, "big") + hashlib.sha256(cause.encode()).digest()[:10]))
