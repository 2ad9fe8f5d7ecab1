"""Items between Python values and DynamoDB attribute values (the low-level client's shape)."""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

Item = dict[str, Any]


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, set):
        return {_plain(v) for v in value}
    if isinstance(value, Binary):
        return value.value  # type: ignore[attr-defined]  # the stubs omit the wrapped bytes
    return value


def serialize(item: Mapping[str, Any]) -> dict[str, Any]:
    """Python values → DynamoDB attribute values; None-valued attributes are left out."""
    return {k: _serializer.serialize(v) for k, v in item.items() if v is not None}


def value(v: Any) -> Any:
    return _serializer.serialize(v)


def deserialize(item: Mapping[str, Any]) -> Item:
    """DynamoDB attribute values → Python values (integral numbers become int)."""
    return {k: _plain(_deserializer.deserialize(v)) for k, v in item.items()}
