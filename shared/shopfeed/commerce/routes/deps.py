"""What commerce routes depend on, built once per container on first use (Powertools Depends)."""

from functools import cache
from typing import Annotated

from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Header, Query

from shopfeed.commerce.repository import CommerceRepository
from shopfeed.commerce.services import Commerce
from shopfeed.commerce.settings import CommerceApiSettings
from shopfeed.platform import clients, dynamo
from shopfeed.platform.config import settings
from shopfeed.platform.cursors import CursorCodec, signing_key


@cache
def commerce_store() -> CommerceRepository:
    config = settings(CommerceApiSettings)
    table = dynamo.Table(clients.dynamodb(), config.commerce_table_name)
    return CommerceRepository(table, CursorCodec(signing_key(config)))


Store = Annotated[Commerce, Depends(commerce_store)]
Cursor = Annotated[str | None, Query(max_length=4096, description="next_cursor of the previous page")]
IfMatch = Annotated[str | None, Header(alias="If-Match", description='The ETag you read, e.g. "3"')]
IdempotencyKey = Annotated[
    str | None,
    Header(alias="Idempotency-Key", description="Unique per create; retries reuse it", max_length=255),
]
