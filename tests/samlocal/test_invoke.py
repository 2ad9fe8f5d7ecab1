"""`sam local invoke` of the commerce API on the sample events in events/api/, in a Lambda container."""

import json

import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_product, money
from local.samlocal.sam import SamLocal
from shopfeed.commerce import items, keys
from shopfeed.commerce.models import DEFAULT_WAREHOUSE
from tests.samlocal.helpers import Tables, invoke

pytestmark = [pytest.mark.samlocal, pytest.mark.xdist_group("samlocal")]


def test_invoke_create_product_event_creates_the_product_as_admin(sam: SamLocal, tables: Tables) -> None:
    # when
    result = invoke(sam, "CommerceApiFunction", "api/create_product.json", tables)

    # then
    assert result["statusCode"] == 201, result
    assert result["headers"]["ETag"] == '"1"'
    assert result["headers"]["Location"] == "/products/P-RED-TSHIRT"
    product = json.loads(result["body"])
    assert product == {
        "product_id": "P-RED-TSHIRT",
        "name": "Red T-shirt",
        "description": "Organic cotton, unisex",
        "category": "apparel",
        "price": money(1999),
        "available": 10,
        "updated_at": product["updated_at"],
        "rating": {"count": 0, "average": None},
    }
    stored = tables.item(keys.product("P-RED-TSHIRT"))
    assert stored is not None
    assert (stored["entity_type"], stored["version"]) == (items.PRODUCT, 1)
    bucket = tables.item(keys.stock_bucket("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 0))
    assert bucket is not None
    assert bucket["available"] == 10


def test_invoke_place_order_event_writes_the_order_and_decrements_stock(
    sam: SamLocal, tables: Tables, commerce_api: ApiClient
) -> None:
    # given
    create_product(commerce_api.as_user("U-ADMIN", "admin"), "P-RED-TSHIRT", price=1999, available=10)

    # when
    result = invoke(sam, "CommerceApiFunction", "api/place_order.json", tables)

    # then
    assert result["statusCode"] == 201, result
    order = json.loads(result["body"])
    assert result["headers"]["Location"] == f"/orders/{order['order_id']}"
    assert order == {
        "order_id": order["order_id"],
        "user_id": "U100",
        "status": "Placed",
        "placed_at": order["placed_at"],
        "updated_at": order["placed_at"],
        "total": money(3998),
        "lines": [
            {
                "line_no": 1,
                "product_id": "P-RED-TSHIRT",
                "quantity": 2,
                "unit_price": money(1999),
                "line_total": money(3998),
            }
        ],
    }
    stored = tables.item(keys.order(order["order_id"]))
    assert stored is not None
    assert (stored["user_id"], stored["status"]) == ("U100", "Placed")
    stock = tables.item(keys.stock_bucket("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 0))
    assert stock is not None
    assert stock["available"] == 8
    assert [event["event_type"] for event in tables.entities(items.OUTBOX_EVENT)] == ["OrderPlaced"]
