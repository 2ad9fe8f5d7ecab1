"""DynamoDB round trips and consumed capacity of whatever runs through the shared client.

The repository never asks for ConsumedCapacity, so a ``before-parameter-build`` hook adds
``ReturnConsumedCapacity=INDEXES`` (the total with its table / index split) to every call that
accepts it, and an ``after-call`` hook reads the answer. SDK retries of one call are one round trip.

DynamoDB Local sizes single-item calls and queries like DynamoDB, but charges a TransactWriteItems
2 units for the table whatever it writes (measured: one small Put, six Puts, an Update: 2 each). So
the table share of a transaction is computed here from the items it wrote, as DynamoDB bills it:
2 WCU per item per started KB. Its index share is DynamoDB Local's.
"""

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3

from shopfeed.platform import clients

_READS = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"})


@dataclass(frozen=True)
class Call:
    operation: str
    error: str | None
    table_units: float | None  # None when DynamoDB reports nothing (a refused write)
    index_units: float | None
    estimated: bool = False  # table_units computed here, not reported
    shares: Mapping[str, float] = field(default_factory=dict)  # by table (logical id) and by index

    @property
    def reads(self) -> bool:
        return self.operation in _READS

    @property
    def units(self) -> float | None:
        if self.table_units is None or self.index_units is None:
            return None
        return self.table_units + self.index_units


@dataclass
class Metered:
    calls: list[Call] = field(default_factory=list)

    @property
    def operations(self) -> list[str]:
        return [call.operation for call in self.calls]

    @property
    def estimated(self) -> bool:
        return any(call.estimated for call in self.calls)

    def units(self, reads: bool) -> float | None:
        """Capacity units (table and indexes) of the read or the write calls; None if one reported none."""
        mine = [call.units for call in self.calls if call.reads == reads]
        return None if None in mine else sum(unit or 0.0 for unit in mine)

    def index_units(self) -> float | None:
        mine = [call.index_units for call in self.calls]
        return None if None in mine else sum(unit or 0.0 for unit in mine)

    def shares(self, reads: bool) -> dict[str, float]:
        """Capacity units of the read or the write calls, per table (logical id) and per index."""
        shares: dict[str, float] = {}
        for call in self.calls:
            if call.reads != reads:
                continue
            for name, share in call.shares.items():
                shares[name] = shares.get(name, 0.0) + share
        return shares


def _value_size(value: Mapping[str, Any]) -> int:
    ((kind, content),) = value.items()
    match kind:
        case "S":
            return len(content.encode())
        case "N":
            digits = content.lstrip("-").replace(".", "").strip("0") or "0"
            return (len(digits) + 1) // 2 + 1
        case "B":
            return len(content)
        case "BOOL" | "NULL":
            return 1
        case "SS":
            return sum(len(s.encode()) for s in content)
        case "NS":
            return sum(_value_size({"N": n}) for n in content)
        case "BS":
            return sum(len(b) for b in content)
        case "L":
            return 3 + sum(1 + _value_size(v) for v in content)
        case "M":
            return 3 + sum(1 + len(k.encode()) + _value_size(v) for k, v in content.items())
    raise ValueError(f"unknown attribute value type {kind}")


def item_size(item: Mapping[str, Mapping[str, Any]]) -> int:
    """Bytes of an item in DynamoDB's sizing: attribute names plus values."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def logical(table_name: str) -> str:
    """The template's logical id of a benchmark table (``create_tables`` appends ``-bench-<id>``)."""
    return table_name.partition("-bench-")[0]


def _consumed(parsed: Mapping[str, Any]) -> tuple[float | None, float | None, dict[str, float]]:
    """The table share, the index share, and the shares by table and by index of one answer."""
    reported = parsed.get("ConsumedCapacity")
    if reported is None:
        return None, None, {}
    entries = reported if isinstance(reported, list) else [reported]
    shares: dict[str, float] = {}
    table_units = index_units = 0.0
    for entry in entries:
        indexes = {
            name: float(i.get("CapacityUnits", 0.0)) for name, i in (entry.get("GlobalSecondaryIndexes") or {}).items()
        }
        own = float(entry.get("CapacityUnits", 0.0)) - sum(indexes.values())
        table = logical(entry["TableName"])
        for name, units in [(table, own), *indexes.items()]:
            shares[name] = shares.get(name, 0.0) + units
        table_units += own
        index_units += sum(indexes.values())
    return table_units, index_units, shares


class Meter:
    """Hooks into the shared DynamoDB client while open; ``measuring()`` records one block."""

    def __init__(self) -> None:
        self._current: Metered | None = None
        self._pending: dict[str, Any] = {}
        self._events = clients.dynamodb().meta.events
        # Reads back what a transaction updated, to size it; a client of its own so it is not metered.
        self._sizer = boto3.client("dynamodb")

    def __enter__(self) -> "Meter":
        self._events.register("before-parameter-build.dynamodb", self._ask_for_capacity)
        self._events.register("after-call.dynamodb", self._record)
        return self

    def __exit__(self, *_: object) -> None:
        self._events.unregister("before-parameter-build.dynamodb", self._ask_for_capacity)
        self._events.unregister("after-call.dynamodb", self._record)

    def _ask_for_capacity(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        if "ReturnConsumedCapacity" in model.input_shape.members:
            params["ReturnConsumedCapacity"] = "INDEXES"
        self._pending = params

    def _record(self, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        if self._current is None:
            return
        table_units, index_units, shares = _consumed(parsed)
        estimated = model.name == "TransactWriteItems" and table_units is not None
        if estimated:
            by_table = self._transaction_units(self._pending["TransactItems"])
            table_units = sum(by_table.values())
            shares = {name: share for name, share in shares.items() if name not in by_table} | by_table
        error = (parsed.get("Error") or {}).get("Code")
        self._current.calls.append(Call(model.name, error, table_units, index_units, estimated, shares))

    def _transaction_units(self, actions: list[dict[str, Any]]) -> dict[str, float]:
        """Per table (logical id): what DynamoDB bills the transaction's items."""
        units: dict[str, float] = {}
        for action in actions:
            ((kind, request),) = action.items()
            if kind == "Put":
                size = item_size(request["Item"])
            else:
                # DynamoDB bills the larger of the before and after images; the after image is
                # what can be read back, and stock or status updates move sizes by a few bytes.
                found = self._sizer.get_item(TableName=request["TableName"], Key=request["Key"])
                size = item_size(found.get("Item") or request["Key"])
            table = logical(request["TableName"])
            units[table] = units.get(table, 0.0) + 2 * max(1, math.ceil(size / 1024))
        return units

    @contextmanager
    def measuring(self) -> Iterator[Metered]:
        self._current = Metered()
        try:
            yield self._current
        finally:
            self._current = None


def item_sizes(table: str) -> dict[str, tuple[int, int, int]]:
    """Per ``entity_type`` of ``table``'s items: (count, median bytes, largest bytes), sized as DynamoDB bills.

    Read with a client of its own (a paged Scan, after the measurements), so nothing here is metered.
    """
    sizes: dict[str, list[int]] = {}
    for page in boto3.client("dynamodb").get_paginator("scan").paginate(TableName=table):
        for item in page["Items"]:
            kind = item.get("entity_type", {}).get("S", "(no entity_type)")
            sizes.setdefault(kind, []).append(item_size(item))
    return {kind: (len(found), sorted(found)[len(found) // 2], max(found)) for kind, found in sorted(sizes.items())}
