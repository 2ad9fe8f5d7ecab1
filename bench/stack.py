"""The commerce API handler over fresh tables in DynamoDB Local, for the benchmarks that need data."""

import io
import os
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass

from local import dynamodb_local
from tests.support.client import ApiClient
from tests.support.tables import create_tables

# The function's configuration as the template gives it, pointed at DynamoDB Local.
ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "CURSOR_SECRET": "bench-cursor-secret",
    "POWERTOOLS_SERVICE_NAME": "shopfeed",
    "POWERTOOLS_METRICS_NAMESPACE": "shopfeed",
    "POWERTOOLS_LOG_LEVEL": "INFO",
}


@dataclass(frozen=True)
class Stack:
    api: ApiClient
    table: str
    engine: str
    tables: dict[str, str]  # every template table by logical id


@contextmanager
def commerce_stack() -> Iterator[Stack]:
    """Start DynamoDB Local, create the template's tables, and give the commerce API handler.

    Call it before anything in the process touched a shopfeed client or setting: both are cached
    per process (per Lambda container) on first use, and must see this environment. The handler's
    log and metric lines (JSON on stdout, which Lambda ships to CloudWatch) are written, as in
    Lambda, and dropped, so stdout carries only the report.
    """
    # Powertools warns on every request that adds no metric (reads); in a benchmark that is noise.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    engine = dynamodb_local.start()
    try:
        os.environ.update(ENVIRONMENT)
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = engine.endpoint
        from shopfeed.platform import clients

        names = create_tables(clients.dynamodb(), suffix=f"-bench-{uuid.uuid4().hex[:8]}")
        os.environ["COMMERCE_TABLE_NAME"] = names["CommerceTable"]

        with redirect_stdout(io.StringIO()):
            # Imported here: Powertools' Logger binds its stream (stdout) when it is created.
            from functions.commerce_api.app import lambda_handler

            yield Stack(ApiClient(lambda_handler), names["CommerceTable"], engine.endpoint, names)
    finally:
        engine.stop()
