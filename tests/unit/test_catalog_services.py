"""Catalog use cases: admins manage products and restock; anyone reads and lists."""

from typing import Any

import pytest

from local.harness.builders import key_for
from shopfeed.commerce.catalog import services
from shopfeed.platform.errors import AlreadyExists, Forbidden, IdempotencyKeyReused, NotFound, StaleVersion
from shopfeed.platform.identity import Caller
from tests.unit.fakes import InMemoryCommerce


def fields(product_id: str = "P-RED-TSHIRT", category: str = "t-shirts", available: int = 10) -> dict[str, Any]:
    return {
        "product_id": product_id,
        "name": "Red T-shirt",
        "description": "",
        "category": category,
        "price": {"amount": 1999, "currency": "EUR"},
        "available": available,
    }


def restock_key(admin: Caller, quantity: int, key: str = "restock-1") -> Any:
    return key_for(admin.user_id, key, "restock:P-RED-TSHIRT", {"quantity": quantity})


def test_an_admin_creates_a_product_at_version_one(store: InMemoryCommerce, admin: Caller) -> None:
    # when
    created = services.create_product(store, admin, fields())
    # then
    assert (created.product_id, created.version, created.available) == ("P-RED-TSHIRT", 1, 10)
    assert services.read_product(store, "P-RED-TSHIRT") == created


def test_a_product_id_is_created_once(store: InMemoryCommerce, admin: Caller) -> None:
    services.create_product(store, admin, fields())
    with pytest.raises(AlreadyExists):
        services.create_product(store, admin, fields())


@pytest.mark.parametrize("caller", ["ada", "ops"])
def test_only_admins_manage_the_catalog(
    store: InMemoryCommerce, admin: Caller, caller: str, request: pytest.FixtureRequest
) -> None:
    # given
    services.create_product(store, admin, fields("P-EXISTING"))
    someone: Caller = request.getfixturevalue(caller)
    # when / then
    with pytest.raises(Forbidden):
        services.create_product(store, someone, fields("P-NEW"))
    with pytest.raises(Forbidden):
        services.update_product(store, someone, "P-EXISTING", 1, {"name": "Hacked"})
    with pytest.raises(Forbidden):
        services.restock_product(store, someone, "P-EXISTING", 5, key_for(someone.user_id, "k"))
    assert store.get_product("P-NEW") is None
    assert services.read_product(store, "P-EXISTING").version == 1


def test_reading_an_unknown_product_is_not_found(store: InMemoryCommerce) -> None:
    with pytest.raises(NotFound) as refused:
        services.read_product(store, "P-GHOST")
    assert (refused.value.kind, refused.value.ident) == ("product", "P-GHOST")


def test_an_admin_updates_a_product_at_the_version_read(store: InMemoryCommerce, admin: Caller) -> None:
    # given
    services.create_product(store, admin, fields())
    # when
    updated = services.update_product(store, admin, "P-RED-TSHIRT", 1, {"price": {"amount": 2499, "currency": "EUR"}})
    with pytest.raises(StaleVersion) as stale:
        services.update_product(store, admin, "P-RED-TSHIRT", 1, {"name": "Late"})
    # then
    assert (updated.price.amount, updated.version) == (2499, 2)
    assert stale.value.current_version == 2


def test_a_category_lists_its_products(store: InMemoryCommerce, admin: Caller) -> None:
    # given
    for product_id, category in [("P-B", "t-shirts"), ("P-A", "t-shirts"), ("P-MUG", "mugs")]:
        services.create_product(store, admin, fields(product_id, category))
    # when
    page = services.list_category(store, "t-shirts", 10, None)
    # then
    assert [p.product_id for p in page.items] == ["P-A", "P-B"]
    assert page.next_cursor is None


def test_a_restock_adds_stock_and_answers_what_was_added(store: InMemoryCommerce, admin: Caller) -> None:
    # given
    services.create_product(store, admin, fields(available=1))
    # when
    answer = services.restock_product(store, admin, "P-RED-TSHIRT", 5, restock_key(admin, 5))
    # then
    assert answer.replayed is False
    assert (answer.value.product_id, answer.value.quantity_added) == ("P-RED-TSHIRT", 5)
    assert services.read_product(store, "P-RED-TSHIRT").available == 6


def test_a_retried_restock_answers_the_first_response_and_adds_nothing(store: InMemoryCommerce, admin: Caller) -> None:
    # given
    services.create_product(store, admin, fields(available=1))
    first = services.restock_product(store, admin, "P-RED-TSHIRT", 5, restock_key(admin, 5))
    # when
    retried = services.restock_product(store, admin, "P-RED-TSHIRT", 5, restock_key(admin, 5))
    # then
    assert (retried.replayed, retried.value) == (True, first.value)
    assert services.read_product(store, "P-RED-TSHIRT").available == 6


def test_a_restock_key_reused_for_another_quantity_is_refused(store: InMemoryCommerce, admin: Caller) -> None:
    # given
    services.create_product(store, admin, fields(available=1))
    services.restock_product(store, admin, "P-RED-TSHIRT", 5, restock_key(admin, 5))
    # when / then
    with pytest.raises(IdempotencyKeyReused):
        services.restock_product(store, admin, "P-RED-TSHIRT", 50, restock_key(admin, 50))
    assert services.read_product(store, "P-RED-TSHIRT").available == 6


def test_restocking_an_unknown_product_is_not_found(store: InMemoryCommerce, admin: Caller) -> None:
    with pytest.raises(NotFound):
        services.restock_product(store, admin, "P-GHOST", 5, restock_key(admin, 5))
