"""Index declarations give items their index keys, on create and on update (platform.dynamo.indexes)."""

import pytest

from shopfeed.platform import dynamo
from shopfeed.platform.dynamo import IndexSpec, Update

BY_COLOUR = IndexSpec(
    "ByColour",
    "colour_pk",
    "colour_sk",
    holds=("Widget",),
    reads=("colour", "widget_id"),
    keys_of=lambda w: {"colour_pk": f"COLOUR#{w['colour']}", "colour_sk": w["widget_id"]},
)
# Sparse: only widgets on sale.
ON_SALE = IndexSpec(
    "OnSale",
    "sale_pk",
    "sale_sk",
    holds=("Widget",),
    reads=("on_sale", "widget_id"),
    keys_of=lambda w: {"sale_pk": "SALE", "sale_sk": w["widget_id"]} if w["on_sale"] else None,
)
HAND_WRITTEN = IndexSpec("ByHand", "hand_pk", "hand_sk")
INDEXES = (BY_COLOUR, ON_SALE, HAND_WRITTEN)


def widget(**attributes: object) -> dict[str, object]:
    return {"PK": "WIDGET#W1", "SK": "META", "entity_type": "Widget", "widget_id": "W1", "colour": "red"} | {
        "on_sale": False,
        **attributes,
    }


def test_an_item_takes_the_keys_of_every_index_that_holds_it() -> None:
    assert dynamo.indexed(INDEXES, widget(on_sale=True)) == widget(on_sale=True) | {
        "colour_pk": "COLOUR#red",
        "colour_sk": "W1",
        "sale_pk": "SALE",
        "sale_sk": "W1",
    }


def test_a_sparse_index_leaves_out_what_it_does_not_hold_and_other_types_take_nothing() -> None:
    assert "sale_pk" not in dynamo.indexed(INDEXES, widget())
    assert dynamo.indexed(INDEXES, {"entity_type": "Gadget", "colour": "red"}) == {
        "entity_type": "Gadget",
        "colour": "red",
    }


def test_an_update_of_a_key_attribute_moves_the_key_and_leaves_other_indexes_alone() -> None:
    # when the colour changes
    change = dynamo.reindexed(INDEXES, widget(colour="blue"), Update(set={"colour": "blue"}))
    # then ByColour moves; OnSale reads no colour and is not written
    assert change == Update(set={"colour": "blue", "colour_pk": "COLOUR#blue", "colour_sk": "W1"})


def test_an_update_that_takes_an_item_out_of_a_sparse_index_removes_its_keys() -> None:
    change = dynamo.reindexed(INDEXES, widget(on_sale=False), Update(set={"on_sale": False}, add={"version": 1}))
    assert change == Update(set={"on_sale": False}, add={"version": 1}, remove=("sale_pk", "sale_sk"))
    joined = dynamo.reindexed(INDEXES, widget(on_sale=True), Update(set={"on_sale": True}))
    assert joined.set == {"on_sale": True, "sale_pk": "SALE", "sale_sk": "W1"}


def test_an_update_whose_item_lacks_what_a_key_reads_fails_loudly_instead_of_leaving_it_stale() -> None:
    partial = {"entity_type": "Widget", "colour": "blue"}  # no widget_id
    with pytest.raises(ValueError, match="ByColour"):
        dynamo.reindexed(INDEXES, partial, Update(set={"colour": "blue"}))
