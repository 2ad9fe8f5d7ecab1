"""AWS failures the SDK's retries could not absorb answer 503 with Retry-After; any other AWS error is
a bug and stays one."""

from typing import Any

import pytest
from aws_lambda_powertools.event_handler.api_gateway import Router
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)

from local.harness.client import ApiClient
from shopfeed.platform import outages
from shopfeed.platform.http import build_resolver
from shopfeed.platform.problems import PROBLEM_JSON


def client_error(code: str, status: int, operation: str = "GetItem") -> ClientError:
    response: Any = {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}
    return ClientError(response, operation)


def _name(value: object) -> str:
    return str(value.response["Error"]["Code"]) if isinstance(value, ClientError) else type(value).__name__


@pytest.mark.parametrize(
    ("error", "retry_after"),
    [
        (client_error("ProvisionedThroughputExceededException", 400), 2),
        (client_error("ThrottlingException", 400), 2),
        (client_error("RequestLimitExceeded", 400), 2),
        (client_error("RequestThrottled", 400, "SendMessageBatch"), 2),
        (client_error("SlowDown", 503, "PutObject"), 2),
        (client_error("InternalServerError", 500), 1),
        (client_error("ServiceUnavailable", 503), 1),
        (client_error("TransactionConflictException", 400, "PutItem"), 1),
        (ConnectionClosedError(endpoint_url="https://dynamodb"), 1),
        (ReadTimeoutError(endpoint_url="https://dynamodb"), 1),
        (EndpointConnectionError(endpoint_url="https://dynamodb"), 1),
    ],
    ids=_name,
)
def test_a_throttled_failing_or_unreachable_dependency_is_an_outage(error: Exception, retry_after: int) -> None:
    assert isinstance(error, ClientError | BotoCoreError)
    outage = outages.unavailable(error)
    assert outage is not None
    assert outage.retry_after == retry_after


@pytest.mark.parametrize(
    "error",
    [
        client_error("ValidationException", 400),
        client_error("ResourceNotFoundException", 400),
        client_error("AccessDeniedException", 400),
        client_error("ConditionalCheckFailedException", 400, "PutItem"),
        NoCredentialsError(),
    ],
    ids=_name,
)
def test_any_other_aws_error_is_not_an_outage(error: ClientError | BotoCoreError) -> None:
    assert outages.unavailable(error) is None


def api_raising(error: Exception) -> ApiClient:
    router = Router()

    @router.get("/dependency")
    def dependency() -> dict[str, Any]:
        raise error

    app = build_resolver(router)
    return ApiClient(app.resolve)


def test_an_outage_the_sdk_could_not_absorb_answers_503_problem_with_retry_after() -> None:
    # when a route meets DynamoDB still throttling after the SDK's retries
    answer = api_raising(client_error("ProvisionedThroughputExceededException", 400)).get("/dependency")

    # then the client is told to come back, in a problem document
    assert answer.status == 503
    assert answer.headers["Retry-After"] == "2"
    assert answer.content_type == PROBLEM_JSON
    assert answer.json["type"] == "https://shopfeed.dev/problems/dependency-unavailable"


def test_an_aws_error_that_is_a_bug_is_not_dressed_as_an_outage() -> None:
    # a 500 with the trace in the log (Lambda's answer to an unhandled error), not a 503 to retry forever
    with pytest.raises(ClientError, match="ValidationException"):
        api_raising(client_error("ValidationException", 400)).get("/dependency")
