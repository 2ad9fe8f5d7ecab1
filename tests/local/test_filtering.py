"""Lambda event filtering, as the local stack applies FilterCriteria before invoking a consumer."""

from typing import Any

import pytest

from local.cfn import load
from local.filtering import FilterPattern, InvalidPattern, filter_patterns, passes


def outbox_insert(entity_type: str = "OutboxEvent", event_name: str = "INSERT") -> dict[str, Any]:
    return {
        "eventName": event_name,
        "dynamodb": {"NewImage": {"entity_type": {"S": entity_type}, "PK": {"S": "OUTBOX#1"}}},
    }


def template_filters(function: str, event: str) -> tuple[FilterPattern, ...]:
    props = load()["Resources"][function]["Properties"]["Events"][event]["Properties"]
    return filter_patterns(props.get("FilterCriteria"))


def test_the_commerce_stream_filter_passes_outbox_inserts_only() -> None:
    # given the template's own filter of the outbox relay
    filters = template_filters("CommerceStreamFunction", "CommerceStream")

    # when records of several kinds are matched
    # then only new outbox items pass
    assert passes(filters, outbox_insert())
    assert not passes(filters, outbox_insert(event_name="MODIFY"))
    assert not passes(filters, outbox_insert(entity_type="Order"))
    assert not passes(filters, {"eventName": "REMOVE", "dynamodb": {"OldImage": {}}})


def test_no_filters_pass_every_record() -> None:
    assert passes((), {"anything": 1})


def test_filters_are_alternatives() -> None:
    # given two filters
    filters = filter_patterns({"Filters": [{"Pattern": '{"a": ["x"]}'}, {"Pattern": '{"b": ["y"]}'}]})

    # then a record matching either passes
    assert passes(filters, {"a": "x"})
    assert passes(filters, {"b": "y"})
    assert not passes(filters, {"a": "y", "b": "x"})


@pytest.mark.parametrize(
    ("pattern", "record", "expected"),
    [
        ({"a": ["x", "y"]}, {"a": "y"}, True),
        ({"a": ["x"]}, {"a": "X"}, False),
        ({"a": [5]}, {"a": 5.0}, True),
        ({"a": [5]}, {"a": "5"}, False),
        ({"a": [None]}, {"a": None}, True),
        ({"a": [None]}, {}, False),
        ({"a": [""]}, {"a": ""}, True),
        ({"a": [True]}, {"a": True}, True),
        ({"a": ["x"]}, {"a": ["w", "x"]}, True),
        ({"a": {"b": {"c": ["x"]}}}, {"a": {"b": {"c": "x"}}}, True),
        ({"a": {"b": ["x"]}}, {"a": "not an object"}, False),
        ({"a": ["x"], "b": ["y"]}, {"a": "x"}, False),
    ],
    ids=[
        "one of several values",
        "values are case-sensitive",
        "numbers compare as numbers",
        "a number does not match its text",
        "null matches null",
        "null does not match a missing field",
        "empty string",
        "booleans",
        "any element of a list",
        "nested objects",
        "nested pattern against a scalar",
        "every field must match",
    ],
)
def test_exact_values_and_nesting(pattern: dict[str, Any], record: dict[str, Any], expected: bool) -> None:
    assert FilterPattern(pattern).matches(record) is expected


@pytest.mark.parametrize(
    ("alternative", "value", "expected"),
    [
        ({"prefix": "OUTBOX#"}, "OUTBOX#1", True),
        ({"prefix": "OUTBOX#"}, "ORDER#1", False),
        ({"prefix": {"equals-ignore-case": "outbox#"}}, "OUTBOX#1", True),
        ({"suffix": ".png"}, "a.png", True),
        ({"equals-ignore-case": "insert"}, "INSERT", True),
        ({"wildcard": "ORDER#*#LINE"}, "ORDER#7#LINE", True),
        ({"wildcard": "ORDER#*"}, "USER#1", False),
        ({"anything-but": ["REMOVE"]}, "INSERT", True),
        ({"anything-but": ["REMOVE"]}, "REMOVE", False),
        ({"anything-but": "REMOVE"}, "REMOVE", False),
        ({"anything-but": {"prefix": "IDEMPOTENCY#"}}, "IDEMPOTENCY#k", False),
        ({"numeric": [">", 0, "<=", 5]}, 5, True),
        ({"numeric": [">", 0, "<=", 5]}, 6, False),
        ({"numeric": ["=", 3]}, "3", False),
        ({"prefix": "1"}, 12, False),
    ],
    ids=[
        "prefix",
        "prefix mismatch",
        "prefix ignoring case",
        "suffix",
        "equals-ignore-case",
        "wildcard",
        "wildcard mismatch",
        "anything-but a list",
        "anything-but excludes",
        "anything-but one value",
        "anything-but a prefix",
        "numeric range",
        "numeric out of range",
        "numeric needs a number",
        "prefix needs a string",
    ],
)
def test_comparison_operators(alternative: dict[str, Any], value: Any, expected: bool) -> None:
    assert FilterPattern({"field": [alternative]}).matches({"field": value}) is expected


def test_exists_checks_presence() -> None:
    # given patterns for a present and an absent field
    present = FilterPattern({"dynamodb": {"OldImage": [{"exists": True}]}})
    absent = FilterPattern({"dynamodb": {"OldImage": [{"exists": False}]}})

    # then each matches its case only
    assert present.matches({"dynamodb": {"OldImage": {"PK": {"S": "x"}}}})
    assert not present.matches({"dynamodb": {}})
    assert absent.matches({"dynamodb": {}})
    assert absent.matches({})


def test_anything_but_needs_the_field_present() -> None:
    assert not FilterPattern({"a": [{"anything-but": ["x"]}]}).matches({})


def test_or_matches_either_branch() -> None:
    # given an $or of two sub-patterns
    pattern = FilterPattern({"$or": [{"a": ["x"]}, {"b": ["y"]}], "c": ["z"]})

    # then either branch will do, with the other fields still required
    assert pattern.matches({"a": "x", "c": "z"})
    assert pattern.matches({"b": "y", "c": "z"})
    assert not pattern.matches({"a": "x"})


@pytest.mark.parametrize(
    "pattern",
    [
        '["not", "an", "object"]',
        '{"a": "x"}',
        '{"a": []}',
        '{"a": [{"prefix": 1}]}',
        '{"a": [{"numeric": [">"]}]}',
        '{"a": [{"numeric": ["~", 1]}]}',
        '{"a": [{"cidr": "10.0.0.0/8"}]}',
        '{"a": [{"prefix": "x", "suffix": "y"}]}',
        '{"$or": [{"a": ["x"]}]}',
    ],
)
def test_invalid_patterns_are_refused_when_the_mapping_is_built(pattern: str) -> None:
    with pytest.raises(InvalidPattern):
        FilterPattern(pattern)
