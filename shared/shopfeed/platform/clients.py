"""The one place boto3 clients are made: once per container, on first use.

Endpoints come from the standard ``AWS_ENDPOINT_URL_<SERVICE>`` variables, so the same code talks to
AWS, to the local stack or to DynamoDB Local without a branch.
"""

from functools import cache
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_events import EventBridgeClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient

# Lambda's own timeout bounds the call; short connect/read timeouts let the SDK's standard retry mode
# try again inside it instead of one stuck socket eating the whole invocation.
_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 4},
    connect_timeout=2,
    read_timeout=5,
    tcp_keepalive=True,
)


@cache
def dynamodb() -> "DynamoDBClient":
    return boto3.client("dynamodb", config=_CONFIG)


@cache
def eventbridge() -> "EventBridgeClient":
    return boto3.client("events", config=_CONFIG)


@cache
def sqs() -> "SQSClient":
    return boto3.client("sqs", config=_CONFIG)


@cache
def s3() -> "S3Client":
    return boto3.client("s3", config=_CONFIG)


@cache
def secret_string(secret_arn: str) -> str:
    return str(boto3.client("secretsmanager", config=_CONFIG).get_secret_value(SecretId=secret_arn)["SecretString"])


def reset() -> None:
    """Forget every client (tests switch endpoints between engines)."""
    for factory in (dynamodb, eventbridge, sqs, s3, secret_string):
        factory.cache_clear()
