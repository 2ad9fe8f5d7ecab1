"""Server-made ids and timestamps: ULIDs (time-sortable) and ISO-8601 UTC strings."""

import hashlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ulid import ULID


def _ulid() -> "type[ULID]":
    # Imported on the first id, not with this module (which every route imports for its timestamps):
    # python-ulid reads its own distribution's metadata at import, ~3 ms of a cold start. Priming makes
    # one id at init (platform.warmup), so a primed container's first create does not pay it.
    from ulid import ULID

    return ULID


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """ISO-8601 UTC with millisecond precision and a Z suffix: sorts as text in time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def new_id(moment: datetime | None = None) -> str:
    """A ULID: 26 characters, lexicographically sortable by creation time."""
    ulid = _ulid()
    return str(ulid.from_datetime(moment) if moment else ulid())


def epoch_seconds(moment: datetime) -> int:
    return int(moment.timestamp())


def derived_id(moment: str, cause: str) -> str:
    """A ULID made from what caused it: the time of ``moment`` (ISO-8601) and a hash of ``cause``, so the
    same cause always makes the same id (a retried write puts the same item, never a second one)."""
    milliseconds = int(datetime.fromisoformat(moment).timestamp() * 1000)
    return str(_ulid().from_bytes(milliseconds.to_bytes(6, "big") + hashlib.sha256(cause.encode()).digest()[:10]))
