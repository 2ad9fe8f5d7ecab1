"""One moto DynamoDB per xdist worker, shared by the integration tests (tests/integration/conftest.py).

Creating the template's tables (indexes, stream, TTL) cost ~90 ms a test against ~8 ms for the mock
itself, and most tests answer before they touch a table. So the tables are created once per worker and
emptied after each test, and everything else moto holds (queues, buses, buckets, secrets) is forgotten
as a fresh ``mock_aws()`` would. Stream readers start from TRIM_HORIZON, so each table also gets a new
stream shard: no record of the previous test reaches the next.

Two of moto's costs that grow with what a test holds are cut where the result is the same: a
transaction is undone by a journal of its items, not a copy of every table (``journal_transactions``),
and an answer's attribute values are put in it as held, not walked through the service model
(``plain_attribute_values``). tests/integration/test_moto_journal.py checks both: a cancelled
transaction leaves nothing, and the answers are those moto would have written.
"""

import copy
from typing import Any

from botocore.model import StructureShape
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.base_backend import BackendDict
from moto.core.serialize import BaseJSONSerializer
from moto.dynamodb.models import DynamoDBBackend, dynamodb_backends
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table

REGION = "us-east-1"


def forget_all_but_dynamodb() -> None:
    """What ``mock_aws()`` resets on start, except DynamoDB's tables (moto has no public call for it)."""
    for backend in list(BackendDict._instances):  # type: ignore[misc]
        if backend is dynamodb_backends:
            continue
        for account in backend.values():
            account.reset()
        backend.clear()
        BackendDict._instances.remove(backend)  # type: ignore[misc]


def empty_tables() -> None:
    """Empty every table and give each a new stream shard, as the moto model holds them.

    Deleting the items through the API (a Scan, then BatchWriteItem) cost ~15 ms a test; clearing the
    model costs nothing whatever a test wrote. moto refuses to enable a stream twice (real DynamoDB would
    make a new one), so the shard is replaced on the model too: the stream ARN changes, as a re-enabled
    stream's would, and a reader from TRIM_HORIZON sees only what the next test writes.
    """
    for table in dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].tables.values():
        table.items.clear()
        if table.stream_specification and table.stream_specification.get("StreamEnabled"):
            table.set_stream_specification(table.stream_specification)


def journal_transactions() -> None:
    """Make moto's TransactWriteItems undo by a journal of the items it touches, not table copies.

    moto backs a transaction up by deep-copying the whole table (stream records included) once per
    operation, so a test's transactions cost O(what the table holds): a like storm of 150 records spent
    96 % of its 47 s in ``copy.deepcopy``. Here the items the transaction names are copied before it
    runs and put back if it is cancelled, the table's stream is cut back to where it was, and moto's own
    copy is made a no-op for the call. What a cancelled transaction leaves is the same: nothing.
    Idempotent; moto's in-process backend is single-threaded here, as the rest of it assumes.
    """
    if getattr(DynamoDBBackend.transact_write_items, "journaled", False):
        return
    unjournaled = DynamoDBBackend.transact_write_items

    def transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
        try:
            journal = [_entry(self, operation) for item in transact_items for operation in item.values()]
        except (
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
        ):  # a malformed request: moto's own checks answer it, with its own copies
            return unjournaled(self, transact_items)
        streams = {
            id(t.stream_shard): (t.stream_shard, len(t.stream_shard.items)) for t, *_ in journal if t.stream_shard
        }
        Table.__deepcopy__ = _same  # type: ignore[attr-defined]
        try:
            unjournaled(self, transact_items)
        except Exception:
            for table, hash_key, range_key, before in reversed(journal):
                _put_back(table, hash_key, range_key, before)
            for shard, length in streams.values():
                del shard.items[length:]
            raise
        finally:
            del Table.__deepcopy__  # type: ignore[attr-defined]

    transact_write_items.journaled = True  # type: ignore[attr-defined]
    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]


def _same(table: Table, memo: dict[int, Any]) -> Table:
    return table


def _entry(backend: DynamoDBBackend, operation: dict[str, Any]) -> tuple[Table, Any, Any, Any]:
    """The table, key and a copy of the item (None when absent) an operation of a transaction names."""
    table = backend.get_table(operation["TableName"])
    key = operation.get("Key") or operation["Item"]
    hash_key = DynamoType(key[table.hash_key_attr])
    range_key = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
    held = table.items.get(hash_key)
    current = held.get(range_key) if range_key is not None and held is not None else held
    return table, hash_key, range_key, copy.deepcopy(current)


def _put_back(table: Table, hash_key: Any, range_key: Any, before: Any) -> None:
    if range_key is None:
        if before is None:
            table.items.pop(hash_key, None)
        else:
            table.items[hash_key] = before
    elif before is None:
        table.items.get(hash_key, {}).pop(range_key, None)
    else:
        table.items[hash_key][range_key] = before


_SCALARS = {"S": str, "N": str, "BOOL": bool, "NULL": bool}


def plain_attribute_values() -> None:
    """Make moto answer DynamoDB's attribute values as they are held, not walked through the model.

    moto's JSON serializer walks every value of a response through the service model: for each
    AttributeValue it asks the value for each of the ten members the shape names, under two spellings
    each, so an item of twenty attributes costs hundreds of lookups. It took ~30 % of the moto tests'
    time (the archive module: 18 of 61 s profiled). An attribute value made of JSON types only (S, N,
    BOOL, NULL, SS, NS, and L and M of those) comes out of that walk as it went in, so it is put into
    the answer as it is; any other (B, BS, or a type the walk would convert) still takes moto's path.
    tests/integration/test_moto_journal.py compares both answers. Idempotent.
    """
    if getattr(BaseJSONSerializer._serialize_type_structure, "plain", False):
        return
    walked = BaseJSONSerializer._serialize_type_structure

    def _serialize_type_structure(
        self: BaseJSONSerializer, serialized: Any, value: Any, shape: StructureShape, key: str
    ) -> None:
        if key and shape.name == "AttributeValue" and _plain(value):
            serialized[self.get_serialized_name(shape, key)] = value
            return
        walked(self, serialized, value, shape, key)

    _serialize_type_structure.plain = True  # type: ignore[attr-defined]
    _serialize_type_structure.walked = walked  # type: ignore[attr-defined]
    BaseJSONSerializer._serialize_type_structure = _serialize_type_structure  # type: ignore[method-assign]


def _plain(value: Any) -> bool:
    """An attribute value of JSON types only, one member, as DynamoDB's wire format spells it."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    ((member, inner),) = value.items()
    if member in _SCALARS:
        return isinstance(inner, _SCALARS[member])
    if member in ("SS", "NS"):
        return isinstance(inner, list) and all(isinstance(one, str) for one in inner)
    if member == "L":
        return isinstance(inner, list) and all(_plain(one) for one in inner)
    if member == "M":
        return isinstance(inner, dict) and all(isinstance(k, str) and _plain(v) for k, v in inner.items())
    return False
