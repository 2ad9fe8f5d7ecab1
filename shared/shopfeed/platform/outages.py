"""AWS failures the SDK's retries could not absorb, told apart from bugs.

A call that is still throttled, still answered 5xx, or still out of reach after its budget's attempts
(``platform.clients``) is an outage of a dependency: the HTTP edge answers it 503 with Retry-After,
so the client sends the request again (with its Idempotency-Key: exactly once). Any other AWS error
(a validation error, a missing table, a denied permission) is a bug or a broken deployment and stays
a 500 with its trace in the log.
"""

from typing import Final

from botocore.exceptions import BotoCoreError, ClientError, ConnectionError, HTTPClientError

from shopfeed.platform.errors import DependencyUnavailable

# The codes botocore's standard mode retries as throttling (botocore/retries/standard.py) and the
# services' own: the caller should wait a little longer before trying again.
THROTTLING: Final = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "SlowDown",
        "LimitExceededException",
        "KmsThrottled",
    }
)
# Answers that say "not now" rather than "no": a write met an item a transaction holds, the same
# transaction is still being applied, the service timed out.
TRANSIENT: Final = frozenset(
    {
        "TransactionConflictException",
        "TransactionInProgressException",
        "RequestTimeout",
        "RequestTimeoutException",
        "PriorRequestNotComplete",
    }
)
THROTTLED_RETRY_AFTER_S: Final = 2
TRANSIENT_RETRY_AFTER_S: Final = 1


def unavailable(error: ClientError | BotoCoreError) -> DependencyUnavailable | None:
    """The 503 that ``error`` deserves if a dependency was throttled, failing or unreachable; None if
    ``error`` is anything else."""
    if isinstance(error, ConnectionError | HTTPClientError):  # resets, timeouts, refused connections
        return DependencyUnavailable(TRANSIENT_RETRY_AFTER_S)
    if not isinstance(error, ClientError):
        return None
    code = error.response.get("Error", {}).get("Code", "")
    status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    if code in THROTTLING or status == 429:
        return DependencyUnavailable(THROTTLED_RETRY_AFTER_S)
    if code in TRANSIENT or status >= 500:
        return DependencyUnavailable(TRANSIENT_RETRY_AFTER_S)
    return None
