"""Stream consumers and the template: each consumer routes exactly the record types its event source
mapping lets in, and the index attribute names of keys.py are the template's."""

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from local import cfn

FUNCTIONS = cfn.resources("AWS::Serverless::Function")
RESOURCES = cfn.load()["Resources"]

STREAM_CONSUMERS = sorted(
    (name, event["Properties"])
    for name, resource in FUNCTIONS.items()
    for event in (resource["Properties"].get("Events") or {}).values()
    if event["Type"] == "DynamoDB"
)


def filtered_entity_types(mapping: dict[str, Any]) -> set[str]:
    """The ``entity_type`` values a mapping's FilterCriteria lets in (from the new or the old image)."""
    types: set[str] = set()
    for criterion in mapping["FilterCriteria"]["Filters"]:
        pattern = json.loads(criterion["Pattern"])
        for image in ("NewImage", "OldImage"):
            types.update(pattern.get("dynamodb", {}).get(image, {}).get("entity_type", {}).get("S", []))
    return types


def routes_of(function: str) -> set[str]:
    code = Path(FUNCTIONS[function]["Properties"]["CodeUri"]).name
    module = importlib.import_module(f"functions.{code}.app")
    return set(module.ROUTES)


def test_the_template_has_stream_consumers() -> None:
    assert STREAM_CONSUMERS


@pytest.mark.parametrize(("function", "mapping"), STREAM_CONSUMERS, ids=[name for name, _ in STREAM_CONSUMERS])
def test_a_consumer_routes_exactly_the_record_types_its_filter_lets_in(function: str, mapping: dict[str, Any]) -> None:
    # A type let in without a route would be counted as unrouted on every record; a route the
    # filter keeps out is dead code that looks alive.
    assert routes_of(function) == filtered_entity_types(mapping)


# -- registries derived from the template ----------------------------------------------------------


def test_each_function_names_an_importable_handler_module() -> None:
    for function in FUNCTIONS:
        module = importlib.import_module(cfn.handler_module(function))
        assert callable(module.lambda_handler), function


def test_the_api_functions_serve_every_route_and_each_route_finds_its_function() -> None:
    routes = cfn.http_api_routes()
    assert {route.function for route in routes} == set(cfn.api_functions())
    for route in routes:
        concrete = route.path.replace("{", "x").replace("}", "")
        assert cfn.function_for(route.method, concrete) in cfn.api_functions()


def test_table_variables_name_every_table_a_function_is_given() -> None:
    tables = {name for name, r in RESOURCES.items() if r["Type"] == "AWS::DynamoDB::Table"}
    assert set(cfn.table_variables().values()) == tables
    assert cfn.table_variables()["COMMERCE_TABLE_NAME"] == "CommerceTable"
