"""Request parameters every API declares the same way (OpenAPI descriptions included)."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Header, Query

Cursor = Annotated[str | None, Query(max_length=4096, description="next_cursor of the previous page")]
IfMatch = Annotated[str | None, Header(alias="If-Match", description='The ETag you read, e.g. "3"')]
IdempotencyKey = Annotated[
    str | None,
    Header(alias="Idempotency-Key", description="Unique per create; retries reuse it", max_length=255),
]
