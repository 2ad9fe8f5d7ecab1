"""Index declarations: where a query reads, and how an item gets its place there.

A context's ``keys.py`` declares each global secondary index once, with what it holds (entity types),
the attributes its keys are made of (``reads``), the function that makes them, and what it projects.
Items then take every index key from the declarations, on create (``indexed``) and on every update
that changes an attribute a key reads (``reindexed``), so an index over a mutable field is never left
stale, and a new index is one declaration (and the template's), not an edit of every item builder.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from shopfeed.platform.dynamo.expressions import Update

PARTITION: Final = "PK"
SORT: Final = "SK"
ENTITY_TYPE: Final = "entity_type"

# The index keys of an item, or None where it holds no place in the index (a sparse index).
KeysOf = Callable[[Mapping[str, Any]], Mapping[str, str] | None]


@dataclass(frozen=True)
class IndexSpec:
    """Where a query reads: a global secondary index (as a context's ``keys.py`` declares it), or the
    base table (``BASE_TABLE``). Its attribute names are spelled once, in the declaration.

    ``holds`` names the entity types whose items it keys, ``keys_of`` makes those keys from an item's
    attributes (``reads`` lists the ones it uses) and ``projection`` is what it copies: the non-key
    attributes of an INCLUDE projection, ``()`` for KEYS_ONLY, None for ALL (template.yaml declares the
    same; a template test compares). An index without ``keys_of`` has its keys written by hand.
    """

    name: str | None
    partition_key: str
    sort_key: str
    holds: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    keys_of: KeysOf | None = field(default=None, compare=False, repr=False)
    projection: tuple[str, ...] | None = None

    @property
    def position_attributes(self) -> tuple[str, ...]:
        """What DynamoDB needs to resume a query here: the table's key plus the index's key."""
        return tuple(dict.fromkeys((PARTITION, SORT, self.partition_key, self.sort_key)))

    @property
    def key_attributes(self) -> tuple[str, str]:
        return self.partition_key, self.sort_key

    def place_of(self, item: Mapping[str, Any]) -> Mapping[str, str] | None:
        """The keys ``item`` carries in this index, or None: not an item it holds, or left out (sparse)."""
        if self.keys_of is None or item.get(ENTITY_TYPE) not in self.holds:
            return None
        missing = [name for name in self.reads if name not in item]
        if missing:
            raise ValueError(f"{self.name} keys read {missing}, which the item does not carry")
        return self.keys_of(item)


BASE_TABLE: Final = IndexSpec(None, PARTITION, SORT)


def indexed(indexes: Iterable[IndexSpec], item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` with the keys of every declared index that holds it."""
    placed = dict(item)
    for index in indexes:
        placed.update(index.place_of(item) or {})
    return placed


def reindexed(indexes: Sequence[IndexSpec], after: Mapping[str, Any], change: Update) -> Update:
    """``change`` plus what it must also write so that every index holding the item agrees with
    ``after`` (the item as the update leaves it, with at least the attributes the affected keys read):
    new keys for each index reading an attribute ``change`` touches, or their removal where the item
    leaves a sparse index."""
    touched = {*change.set, *change.set_if_absent, *change.add, *change.remove}
    keys: dict[str, str] = {}
    removed: list[str] = []
    for index in indexes:
        if index.keys_of is None or after.get(ENTITY_TYPE) not in index.holds or not touched & set(index.reads):
            continue
        place = index.place_of(after)
        if place is None:
            removed += index.key_attributes
        else:
            keys.update(place)
    return Update(
        set={**change.set, **keys},
        set_if_absent=change.set_if_absent,
        add=change.add,
        remove=(*change.remove, *(name for name in removed if name not in keys)),
    )
