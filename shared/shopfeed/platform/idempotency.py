"""Idempotency-Key handling (IETF httpapi idempotency-key draft semantics), recorded atomically.

The key record is one more Put inside the business TransactWriteItems, conditioned on the key being
new. So the side effect and the key commit together (one round trip), and a retry's transaction is
cancelled with the stored record returned in CancellationReasons (ALL_OLD): the replay needs no read.
Powertools' idempotency utility is not used because it writes its record in a separate call before
and after the handler, which leaves a window where the created resource exists and the key does not.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from shopfeed.platform import dynamo
from shopfeed.platform.clock import epoch_seconds, iso
from shopfeed.platform.errors import IdempotencyKeyReused, MissingIdempotencyKey

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
RETENTION = timedelta(hours=24)
_PREFIX = "IDEMPOTENCY#"
_SORT = "REQUEST"
ENTITY_TYPE = "IdempotencyKey"


@dataclass(frozen=True)
class IdempotentRequest:
    """A create request with its client key, scoped to the caller, and a fingerprint of what it asks."""

    user_id: str
    key: str
    fingerprint: str

    @classmethod
    def of(cls, user_id: str, key: str | None, operation: str, body: Any) -> "IdempotentRequest":
        if key is None or not 1 <= len(key.strip()) <= 255 or not key.isprintable():
            raise MissingIdempotencyKey()
        canonical = json.dumps([operation, body], sort_keys=True, separators=(",", ":"), default=str)
        return cls(user_id, key.strip(), hashlib.sha256(canonical.encode()).hexdigest())


@dataclass(frozen=True)
class StoredResponse:
    """What the first request was answered; a replay answers the same."""

    status: int
    body: dict[str, Any]
    replayed: bool = False


def record_put(
    table: str, request: IdempotentRequest, response: StoredResponse, now: datetime
) -> "TransactWriteItemTypeDef":
    """The Put that records the key inside the business transaction."""
    item = {
        "PK": f"{_PREFIX}{request.user_id}#{request.key}",
        "SK": _SORT,
        "entity_type": ENTITY_TYPE,
        "fingerprint": request.fingerprint,
        "response_status": response.status,
        "response_body": json.dumps(response.body, separators=(",", ":")),
        "created_at": iso(now),
        "expires_at": epoch_seconds(now + RETENTION),
    }
    return {
        "Put": {
            "TableName": table,
            "Item": dynamo.serialize(item),
            "ConditionExpression": "attribute_not_exists(PK)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }


def replay(request: IdempotentRequest, reason: dynamo.Reason) -> StoredResponse | None:
    """The stored response if ``reason`` says the key was already used; None if the key is new.

    Same key with another body → IdempotencyKeyReused (422).
    """
    if not reason.failed_condition or reason.item is None:
        return None
    if reason.item["fingerprint"] != request.fingerprint:
        raise IdempotencyKeyReused(request.key)
    return StoredResponse(
        status=int(reason.item["response_status"]),
        body=json.loads(reason.item["response_body"]),
        replayed=True,
    )
