"""Each table's indexes in template.yaml are exactly those its context's keys module declares: names,
key attributes and projections. A new index is a declaration in keys.py and its twin here, nothing else."""

from typing import Any

import pytest

from local import cfn
from shopfeed.commerce import keys as commerce_keys
from shopfeed.feed import keys as feed_keys
from shopfeed.platform.dynamo import IndexSpec

TABLES = {"CommerceTable": commerce_keys.INDEXES, "FeedTable": feed_keys.INDEXES}
RESOURCES = cfn.load()["Resources"]


def declared(table: str) -> dict[str, dict[str, Any]]:
    return {i["IndexName"]: i for i in RESOURCES[table]["Properties"]["GlobalSecondaryIndexes"]}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_the_template_declares_exactly_the_indexes_of_keys_py(table: str) -> None:
    assert sorted(declared(table)) == sorted(str(index.name) for index in TABLES[table])


@pytest.mark.parametrize(
    ("table", "index"),
    [(table, index) for table, indexes in TABLES.items() for index in indexes],
    ids=lambda value: value if isinstance(value, str) else str(value.name),
)
def test_an_index_has_the_key_attributes_and_the_projection_of_its_declaration(table: str, index: IndexSpec) -> None:
    template = declared(table)[str(index.name)]
    assert template["KeySchema"] == [
        {"AttributeName": index.partition_key, "KeyType": "HASH"},
        {"AttributeName": index.sort_key, "KeyType": "RANGE"},
    ]
    projection = template["Projection"]
    if index.projection is None:
        assert projection == {"ProjectionType": "ALL"}
    elif index.projection == ():
        assert projection == {"ProjectionType": "KEYS_ONLY"}
    else:
        assert projection["ProjectionType"] == "INCLUDE"
        assert sorted(projection["NonKeyAttributes"]) == sorted(index.projection)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_index_key_attribute_is_declared_once_with_a_type(table: str) -> None:
    types = [a["AttributeName"] for a in RESOURCES[table]["Properties"]["AttributeDefinitions"]]
    keyed = {name for index in TABLES[table] for name in (index.partition_key, index.sort_key)} | {"PK", "SK"}
    assert sorted(types) == sorted(keyed)
