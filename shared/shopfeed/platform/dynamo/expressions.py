"""Update and condition expressions for the low-level client: an ``Update`` by intent, rendered with
the placeholders of one request. Conditions are boto3's own ``Attr`` / ``Key`` builders."""

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from boto3.dynamodb.conditions import ConditionBase, ConditionExpressionBuilder

from shopfeed.platform.dynamo.serialization import value


@dataclass(frozen=True)
class Update:
    """An UpdateExpression by intent: ``set`` values, ``set_if_absent`` (first write wins), ``add`` to
    numbers (negative to subtract) or elements to a string set, ``remove`` attributes. Attribute names
    may be dotted paths."""

    set: Mapping[str, Any] = field(default_factory=dict)
    set_if_absent: Mapping[str, Any] = field(default_factory=dict)
    add: Mapping[str, int | AbstractSet[str]] = field(default_factory=dict)
    remove: Sequence[str] = ()


@dataclass
class Expressions:
    """Placeholders of one request; boto3's builder numbers names and values #n0/:v0, ours #u0/:u0."""

    names: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    _builder: ConditionExpressionBuilder = field(default_factory=ConditionExpressionBuilder)

    def condition(self, condition: ConditionBase, is_key_condition: bool = False) -> str:
        built = self._builder.build_expression(condition, is_key_condition=is_key_condition)
        self.names.update(built.attribute_name_placeholders)
        self.values.update({k: value(v) for k, v in built.attribute_value_placeholders.items()})
        return str(built.condition_expression)

    def name(self, path: str) -> str:
        placeholders = []
        for part in path.split("."):
            placeholder = f"#u{len(self.names)}"
            self.names[placeholder] = part
            placeholders.append(placeholder)
        return ".".join(placeholders)

    def _value(self, v: Any) -> str:
        placeholder = f":u{len(self.values)}"
        self.values[placeholder] = value(v)
        return placeholder

    def update(self, change: Update) -> str:
        sets = [f"{self.name(k)} = {self._value(v)}" for k, v in change.set.items()]
        for k, v in change.set_if_absent.items():
            name = self.name(k)
            sets.append(f"{name} = if_not_exists({name}, {self._value(v)})")
        adds = [f"{self.name(k)} {self._value(v)}" for k, v in change.add.items()]
        removes = [self.name(k) for k in change.remove]
        clauses = [("SET", sets), ("ADD", adds), ("REMOVE", removes)]
        return " ".join(f"{verb} {', '.join(parts)}" for verb, parts in clauses if parts)

    def arguments(self) -> dict[str, Any]:
        present: dict[str, Any] = {}
        if self.names:
            present["ExpressionAttributeNames"] = self.names
        if self.values:
            present["ExpressionAttributeValues"] = self.values
        return present
