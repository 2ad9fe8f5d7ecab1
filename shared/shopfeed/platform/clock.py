"""Server-made ids and timestamps: ULIDs (time-sortable) and ISO-8601 UTC strings."""

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
