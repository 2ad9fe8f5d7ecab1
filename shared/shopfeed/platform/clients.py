"""The one place boto3 clients are made: once per container, on first use, from boto3's default
session, with the retry budget of the function that makes them.

Endpoints come from the standard ``AWS_ENDPOINT_URL_<SERVICE>`` variables, so the same code talks to
AWS, to the local stack or to DynamoDB Local without a branch.

**Retries.** Each function says in template.yaml (``CALL_BUDGET``) which budget its calls get; every
client of the function gets it. DynamoDB, SQS, EventBridge and Secrets Manager answer in
milliseconds, so a read timeout of a few seconds means a lost answer, not a slow one, and a new
attempt on a fresh connection is the quickest way out. The worst case of one call (``worst_case_s``)
must leave the function time to answer after it: ``tests/template`` checks it against each Timeout.

- ``request`` (the API functions, Timeout 10 s): someone is waiting, and a 503 with Retry-After is
  a better answer than a timeout (Lambda's would be a 500). Standard mode, 3 attempts, connect 1 s,
  read 1.5 s: worst 7.7 s. Adaptive mode would be wrong here: its client-side rate limiter is per
  process, so one container's throttles would make it delay its own later requests while sixty
  others carry on.
- ``background`` (stream consumers and queue workers, Timeout 30-60 s): no one waits, and a call
  that fails costs a redelivery of its record or message: standard, 5 attempts, connect 1 s, read
  3 s: worst 24.4 s, inside the payment worker's 30 s.
- ``batch`` (the scheduled jobs, one container at a time, Timeout 120-900 s): long runs against one
  table, where a throttle means the job is going too fast. Adaptive mode: its rate limiter slows the
  one client that runs instead of retrying into the throttle; 8 attempts, connect 1 s, read 5 s (S3
  objects of the archive): worst 88.4 s, inside the sweeper's 120 s. The jobs stop on their own
  clock before their Timeout.

Standard mode retries throttling (ProvisionedThroughputExceeded, Throttling, RequestLimitExceeded),
5xx answers, connection errors and read timeouts. It does not retry a TransactWriteItems cancelled
by a TransactionConflict (``dynamo.transact_write`` does); its retries of a TransactWriteItems reuse
the call's ClientRequestToken, so a retry after a lost answer does not write twice. What the budget
cannot absorb reaches the caller: 503 at the HTTP edge (``platform.outages``), a failed record or
message for the pollers to deliver again.
"""

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

import boto3
from botocore.config import Config
from pydantic import Field

from shopfeed.platform.config import Settings, settings

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_events import EventBridgeClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient

# botocore's standard backoff before attempt i+1 (0-based i): up to min(2^i, 20) s after a throttle,
# up to 0.05·2^i s after any other error (0.025·2^i for DynamoDB).
_THROTTLE_BACKOFF_S = 1.0
_OTHER_BACKOFF_S = 0.05
_MAX_BACKOFF_S = 20.0


@dataclass(frozen=True)
class CallBudget:
    """How a client retries and how long each attempt may wait."""

    mode: Literal["standard", "adaptive"]
    attempts: int  # in all, the first included (botocore's total_max_attempts)
    connect_timeout_s: float
    read_timeout_s: float

    def config(self, timeout_scale: float = 1.0) -> Config:
        return Config(
            retries={"mode": self.mode, "total_max_attempts": self.attempts},
            connect_timeout=self.connect_timeout_s * timeout_scale,
            read_timeout=self.read_timeout_s * timeout_scale,
            tcp_keepalive=True,
            # botocore walks every request against the operation's shapes before sending it: a tenth of
            # an order's handler CPU (a seven-item TransactWriteItems). The requests are built by typed
            # code (the mypy_boto3 stubs) and tested against moto and DynamoDB Local, and AWS validates
            # them anyway (a ValidationException instead of a ParamValidationError). botocore's Config
            # reference names this switch for performance.
            parameter_validation=False,
        )

    def worst_case_s(self) -> float:
        """The longest one call can take before the SDK gives up: each attempt either waits out its
        timeouts or is throttled at once, whichever makes the wait before the next one longer.
        (Adaptive mode may add its rate limiter's waits: the jobs that use it watch their clock.)"""
        attempt = self.connect_timeout_s + self.read_timeout_s
        waits = sum(
            max(attempt + _OTHER_BACKOFF_S * 2.0**i, min(_THROTTLE_BACKOFF_S * 2.0**i, _MAX_BACKOFF_S))
            for i in range(self.attempts - 1)
        )
        return waits + attempt


BUDGETS: dict[str, CallBudget] = {
    "request": CallBudget("standard", attempts=3, connect_timeout_s=1.0, read_timeout_s=1.5),
    "background": CallBudget("standard", attempts=5, connect_timeout_s=1.0, read_timeout_s=3.0),
    "batch": CallBudget("adaptive", attempts=8, connect_timeout_s=1.0, read_timeout_s=5.0),
}


class ClientSettings(Settings):
    # The tightest by default: a function that says nothing gets the budget of the Globals' 10 s.
    call_budget: Literal["request", "background", "batch"] = "request"
    # Local engines only (never set in template.yaml): DynamoDB Local is a JVM on the developer's
    # machine and answers a loaded two-core laptop in seconds where DynamoDB answers in milliseconds,
    # so the local stack and the tests on it stretch every timeout by this factor (local/engines.py).
    call_timeout_scale: float = Field(default=1.0, ge=1.0, le=10.0)


def _config() -> Config:
    chosen = settings(ClientSettings)
    return BUDGETS[chosen.call_budget].config(chosen.call_timeout_scale)


@cache
def dynamodb() -> "DynamoDBClient":
    return boto3.client("dynamodb", config=_config())


@cache
def eventbridge() -> "EventBridgeClient":
    return boto3.client("events", config=_config())


@cache
def sqs() -> "SQSClient":
    return boto3.client("sqs", config=_config())


@cache
def s3() -> "S3Client":
    # Signature V4 for presigned forms and links too (botocore still presigns with V2 in us-east-1,
    # which S3 refuses for buckets created since 2020).
    return boto3.client("s3", config=_config().merge(Config(signature_version="s3v4")))


@cache
def sesv2() -> Any:
    # Typed Any: no mypy_boto3_sesv2 stubs are installed; SesSender declares the one call it makes.
    return boto3.client("sesv2", config=_config())


@cache
def secret_string(secret_arn: str) -> str:
    return str(boto3.client("secretsmanager", config=_config()).get_secret_value(SecretId=secret_arn)["SecretString"])


def reset() -> None:
    """Forget every client (tests switch endpoints between engines)."""
    for factory in (dynamodb, eventbridge, sqs, s3, sesv2, secret_string):
        factory.cache_clear()
