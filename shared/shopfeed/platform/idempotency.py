"""Idempotency-Key handling (IETF httpapi idempotency-key draft semantics), recorded atomically.

The key record is one more Put inside the business TransactWriteItems, conditioned on the key being
new. So the side effect and the key commit together (one round trip), and a retry's transaction is
cancelled with the stored record returned in CancellationReasons (ALL_OLD): the replay needs no read.
The record keeps the created value (a versioned ``Snapshot``), not an HTTP response: services answer
``Created(value, replayed)`` and the route renders it, so a replay is rendered as the first answer was.
Powertools' idempotency utility is not used because it writes its record in a separate call before
and after the handler, which leaves a window where the created resource exists and the key does not.
"""

import hashlib
import json
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from shopfeed.platform import key_parts
from shopfeed.platform.clock import epoch_seconds, iso
from shopfeed.platform.errors import IdempotencyKeyReused, MissingIdempotencyKey

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

    from shopfeed.platform import dynamo

REPLAYED_HEADER = "Idempotent-Replayed"
RETENTION = timedelta(hours=24)
_PREFIX = "IDEMPOTENCY#"
_SORT = "REQUEST"
ENTITY_TYPE = "IdempotencyKey"
# The key record's label in a transaction: its cancellation reason is read by this.
KEY = "idempotency-key"


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
class Created[T]:
    """What an idempotent create answers: the created value, and whether this answer is the replay of
    an earlier request with the same key (the HTTP edge picks status and headers from it)."""

    value: T
    replayed: bool = False


def _unchanged(value: dict[str, Any]) -> dict[str, Any]:
    return value


@dataclass(frozen=True)
class Snapshot[M: BaseModel]:
    """How a created value is kept in its key record, and read back on a replay.

    The record stores the value's JSON and the snapshot ``version`` it was written under. A replay
    within the retention window may meet a record written by an older release: its JSON is brought
    forward by ``upgrades`` (``{1: add_channel}`` turns a version-1 value into a version-2 one), and
    members the model no longer has are dropped. So adding a field with a default costs nothing,
    adding a required field costs one upgrade and a version bump, and a replay never fails on shape.
    Records written before snapshots were versioned carry ``response_body``: they are version 0.
    """

    model: type[M]
    version: int = 1
    upgrades: Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)

    def attributes(self, value: M) -> "dynamo.Item":
        # Compressed: an order's JSON crosses 1 KB from about six lines, and every started KB costs
        # 2 WCU per order and per replay; compressed it stays under 800 B up to 48 lines (figures in
        # docs/data-model.md, bench/idempotency_cost.py).
        document = json.dumps(value.model_dump(mode="json"), separators=(",", ":")).encode()
        return {"snapshot": zlib.compress(document, 9), "snapshot_version": self.version}

    def load(self, record: Mapping[str, Any]) -> M:
        if "snapshot" in record:
            raw = record["snapshot"]
            document = zlib.decompress(raw) if isinstance(raw, bytes) else raw.encode()
            stored, version = json.loads(document), int(record["snapshot_version"])
        else:
            stored, version = json.loads(record["response_body"]), 0
        for step in range(version, self.version):
            stored = self.upgrades.get(step, _unchanged)(stored)
        return self.model.model_validate({k: v for k, v in stored.items() if k in self.model.model_fields})


def record_put[M: BaseModel](
    table: str, request: IdempotentRequest, snapshot: Snapshot[M], value: M, now: datetime
) -> "TransactWriteItemTypeDef":
    """The Put that records the key, with the created value, inside the business transaction."""
    # The DynamoDB gateway is imported where a record is written or read, not with this module: routes
    # and services import it for IdempotentRequest and Created, and an API's import leaves the gateway
    # to the repositories, which priming builds (decision 214).
    from shopfeed.platform import dynamo

    item = {
        **_record_key(request),
        "entity_type": ENTITY_TYPE,
        "fingerprint": request.fingerprint,
        **snapshot.attributes(value),
        "created_at": iso(now),
        dynamo.TTL_ATTRIBUTE: epoch_seconds(now + RETENTION),
    }
    return {
        "Put": {
            "TableName": table,
            "Item": dynamo.serialize(item),
            # A record past its retention that TTL has not deleted yet is no record: the key is new again.
            "ConditionExpression": "attribute_not_exists(PK) OR #expires_at <= :now",
            "ExpressionAttributeNames": {"#expires_at": dynamo.TTL_ATTRIBUTE},
            "ExpressionAttributeValues": {":now": {"N": str(epoch_seconds(now))}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }


def commit[M: BaseModel](
    table: "dynamo.Table",
    transaction: "dynamo.Transaction",
    request: IdempotentRequest,
    snapshot: Snapshot[M],
    value: M,
    now: datetime,
    busy: str,
) -> Created[M]:
    """Commit ``transaction`` with the key's record in it (labelled ``KEY``): ``Created(value)``, or the
    first request's value when this is its retry, from the record CancellationReasons returns. Any
    other cancellation raises TransactionCancelled, for the caller to read by its own labels; ``busy``
    names what was contended (``Table.transact``)."""
    from shopfeed.platform import dynamo

    transaction.add(KEY, record_put(table.name, request, snapshot, value, now))
    try:
        table.transact(transaction, busy=busy)
    except dynamo.TransactionCancelled as cancelled:
        replayed = replay(request, cancelled.reason(KEY), snapshot)
        if replayed:
            return replayed
        raise
    return Created(value)


def _record_key(request: IdempotentRequest) -> dict[str, str]:
    return {"PK": f"{_PREFIX}{key_parts.escape(request.user_id)}#{request.key}", "SK": _SORT}


def recorded[M: BaseModel](
    table: "dynamo.Table", request: IdempotentRequest, snapshot: Snapshot[M]
) -> Created[M] | None:
    """The first request's value if the key was used, read (one GetItem); None if the key is new.

    For a create that can be refused before its transaction runs (a checkout finds the cart it
    emptied empty): a retry must still answer what the key made, not the refusal."""
    from shopfeed.platform import dynamo

    item = table.get(_record_key(request))
    # A record past its retention that TTL has not deleted yet is no record, as for record_put's condition.
    if item is None or int(item[dynamo.TTL_ATTRIBUTE]) <= dynamo.now_epoch():
        return None
    return replay(request, dynamo.Reason("ConditionalCheckFailed", item), snapshot)


def replay[M: BaseModel](
    request: IdempotentRequest, reason: "dynamo.Reason", snapshot: Snapshot[M]
) -> Created[M] | None:
    """The first request's value if ``reason`` says the key was already used; None if the key is new.

    Same key with another body → IdempotencyKeyReused (422).
    """
    if not reason.failed_condition or reason.item is None:
        return None
    if reason.item["fingerprint"] != request.fingerprint:
        raise IdempotencyKeyReused(request.key)
    return Created(snapshot.load(reason.item), replayed=True)
