"""Lambda event filtering: the ``FilterCriteria`` of an event source mapping, applied to one record.

A pattern mirrors the record's shape; each leaf is a list of alternatives, any of which may match:
exact values (strings, numbers, ``null``), and the comparison objects ``prefix``, ``suffix``,
``equals-ignore-case``, ``wildcard``, ``anything-but``, ``exists`` and ``numeric``, plus ``$or``.
A record passes a mapping when any of its filters matches (filters are OR-ed). Written here because
no library applies Lambda's rules to a record, and the local stack must skip exactly the records
Lambda would skip.
"""

import json
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

_MISSING = object()
_NUMERIC: dict[str, Callable[[float, float], bool]] = {
    "=": operator.eq,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class InvalidPattern(ValueError):
    """A filter pattern Lambda would refuse when the mapping is created."""


class FilterPattern:
    """One ``Filters[].Pattern`` of a mapping, checked when it is built."""

    def __init__(self, pattern: Mapping[str, Any] | str) -> None:
        document = json.loads(pattern) if isinstance(pattern, str) else pattern
        if not isinstance(document, Mapping):
            raise InvalidPattern(f"a filter pattern is a JSON object, not {document!r}")
        _check_object(document)
        self.pattern: Mapping[str, Any] = document

    def matches(self, record: Mapping[str, Any]) -> bool:
        return _match_object(self.pattern, record)

    def __repr__(self) -> str:
        return f"FilterPattern({json.dumps(self.pattern, separators=(',', ':'))})"


def filter_patterns(criteria: Mapping[str, Any] | None) -> tuple[FilterPattern, ...]:
    """The patterns of a ``FilterCriteria`` property (none: every record passes)."""
    return tuple(FilterPattern(f["Pattern"]) for f in (criteria or {}).get("Filters") or ())


def passes(patterns: Sequence[FilterPattern], record: Mapping[str, Any]) -> bool:
    """Whether Lambda would hand ``record`` to the function: no filters, or any filter matching."""
    return not patterns or any(p.matches(record) for p in patterns)


# -- checking ----------------------------------------------------------------------------------


def _check_object(pattern: Mapping[str, Any]) -> None:
    for key, value in pattern.items():
        if key == "$or":
            if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, Mapping) for v in value):
                raise InvalidPattern("$or takes a list of at least two patterns")
            for branch in value:
                _check_object(branch)
        elif isinstance(value, Mapping):
            _check_object(value)
        elif isinstance(value, list):
            if not value:
                raise InvalidPattern(f"{key}: an empty list of alternatives matches nothing")
            for alternative in value:
                _check_alternative(key, alternative)
        else:
            raise InvalidPattern(f"{key}: match values go in a list, as in [{json.dumps(value)}]")


def _check_alternative(key: str, alternative: Any) -> None:
    if not isinstance(alternative, Mapping):
        return
    if len(alternative) != 1:
        raise InvalidPattern(f"{key}: a comparison object has exactly one operator: {alternative}")
    ((name, argument),) = alternative.items()
    if name in ("prefix", "suffix") and isinstance(argument, Mapping):
        if set(argument) != {"equals-ignore-case"}:
            raise InvalidPattern(f"{key}: {name} takes a string or {{'equals-ignore-case': ...}}")
    elif name in ("prefix", "suffix", "equals-ignore-case", "wildcard"):
        if not isinstance(argument, str):
            raise InvalidPattern(f"{key}: {name} takes a string")
    elif name == "exists":
        if not isinstance(argument, bool):
            raise InvalidPattern(f"{key}: exists takes true or false")
    elif name == "anything-but":
        if isinstance(argument, Mapping):
            _check_alternative(key, argument)
    elif name == "numeric":
        _numeric_terms(key, argument)
    else:
        raise InvalidPattern(f"{key}: unsupported comparison {name!r}")


def _numeric_terms(key: str, argument: Any) -> list[tuple[Callable[[float, float], bool], float]]:
    if not isinstance(argument, list) or not argument or len(argument) % 2 or len(argument) > 4:
        raise InvalidPattern(f"{key}: numeric takes [op, value] or [op, value, op, value]")
    terms = []
    for op, bound in zip(argument[::2], argument[1::2], strict=True):
        if op not in _NUMERIC or isinstance(bound, bool) or not isinstance(bound, int | float):
            raise InvalidPattern(f"{key}: numeric comparison {op!r} {bound!r} is not valid")
        terms.append((_NUMERIC[op], float(bound)))
    return terms


# -- matching ----------------------------------------------------------------------------------


def _match_object(pattern: Mapping[str, Any], record: Any) -> bool:
    fields = record if isinstance(record, Mapping) else {}
    for key, expected in pattern.items():
        if key == "$or":
            if not any(_match_object(branch, record) for branch in expected):
                return False
            continue
        actual = fields.get(key, _MISSING)
        if isinstance(expected, Mapping):
            if not _match_object(expected, {} if actual is _MISSING else actual):
                return False
        elif not _match_leaf(expected, actual):
            return False
    return True


def _match_leaf(alternatives: Iterable[Any], actual: Any) -> bool:
    # A list in the record matches when any of its elements does (Lambda intersects arrays).
    values = actual if isinstance(actual, list) else [actual]
    return any(_match_alternative(alt, value) for alt in alternatives for value in values)


def _match_alternative(alternative: Any, value: Any) -> bool:
    if not isinstance(alternative, Mapping):
        return value is not _MISSING and _equal(alternative, value)
    ((name, argument),) = alternative.items()
    if name == "exists":
        return (value is not _MISSING) is argument
    if value is _MISSING:
        return False
    if name == "numeric":
        number = _number(value)
        return number is not None and all(test(number, bound) for test, bound in _numeric_terms(name, argument))
    if name == "anything-but":
        return not _anything_but_hits(argument, value)
    if not isinstance(value, str):
        return False
    return _text_matches(name, argument, value)


def _text_matches(name: str, argument: str | Mapping[str, str], value: str) -> bool:
    if isinstance(argument, Mapping):  # prefix/suffix with equals-ignore-case
        argument, value = argument["equals-ignore-case"].casefold(), value.casefold()
    if name == "prefix":
        return value.startswith(argument)
    if name == "suffix":
        return value.endswith(argument)
    if name == "equals-ignore-case":
        return value.casefold() == argument.casefold()
    return re.fullmatch(".*".join(re.escape(part) for part in argument.split("*")), value) is not None


def _anything_but_hits(argument: Any, value: Any) -> bool:
    if isinstance(argument, Mapping):
        ((name, inner),) = argument.items()
        return isinstance(value, str) and _text_matches(name, inner, value)
    excluded = argument if isinstance(argument, list) else [argument]
    return any(_equal(e, value) for e in excluded)


def _equal(expected: Any, value: Any) -> bool:
    if expected is None or value is None:
        return expected is None and value is None
    expected_number, actual_number = _number(expected), _number(value)
    if expected_number is not None and actual_number is not None:
        return expected_number == actual_number  # 5 matches 5.0, as JSON numbers
    return type(expected) is type(value) and expected == value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
