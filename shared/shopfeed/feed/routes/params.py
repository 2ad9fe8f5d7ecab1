"""Parameters the feed routes share (path, paging, headers)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query

from shopfeed.platform.types import EntityId

UserPath = Annotated[str, Path(max_length=128, description="A user id ('me' is the caller where it says so)")]
PostPath = Annotated[EntityId, Path(description="A ULID")]
Cursor = Annotated[str | None, Query(max_length=4096, description="next_cursor of the previous page")]
IdempotencyKey = Annotated[
    str | None,
    Header(alias="Idempotency-Key", description="Unique per create; retries reuse it", max_length=255),
]
