"""Path parameters the feed routes share (the platform declares paging and headers)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from shopfeed.platform.types import EntityId, UserId

UserPath = Annotated[UserId, Path(description="A user id, percent-encoded ('me' is the caller where it says so)")]
PostPath = Annotated[EntityId, Path(description="A ULID")]
