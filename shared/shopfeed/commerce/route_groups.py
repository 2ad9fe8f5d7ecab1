"""The commerce API's route groups: the module whose ``router`` serves each route key API Gateway sends
(``routeKey``), in the order the API includes them.

``functions/commerce_api/app.py`` builds its resolver from this table without importing a group: a request
imports its own group on first use, priming imports them all (data model decisions 233–235).
``tests/unit/test_route_groups.py`` fails, naming the tuple to write, when this table and a router or
template.yaml disagree.
"""

ROUTE_GROUPS = {
    "shopfeed.accounts.routes": ("POST /users", "GET /users/{user_id}", "PATCH /users/me"),
    "shopfeed.commerce.routes.products": (
        "POST /products",
        "GET /products/{product_id}",
        "PATCH /products/{product_id}",
        "GET /products",
        "POST /products/{product_id}/stock",
    ),
    "shopfeed.commerce.routes.search": ("GET /search/products",),
    "shopfeed.commerce.routes.reviews": (
        "POST /products/{product_id}/reviews",
        "GET /products/{product_id}/reviews",
        "GET /products/{product_id}/reviews/{user_id}",
        "PUT /products/{product_id}/reviews/me",
        "DELETE /products/{product_id}/reviews/me",
        "GET /users/{user_id}/reviews",
    ),
    "shopfeed.commerce.routes.orders": (
        "POST /orders",
        "GET /orders/{order_id}",
        "GET /orders/{order_id}/lines",
        "GET /orders/{order_id}/history",
        "GET /users/me/orders",
        "GET /orders",
        "POST /orders/{order_id}/cancel",
    ),
    "shopfeed.commerce.routes.cart": (
        "GET /users/me/cart",
        "PUT /users/me/cart/items/{product_id}",
        "DELETE /users/me/cart/items/{product_id}",
        "POST /users/me/cart/checkout",
    ),
    "shopfeed.commerce.routes.payments": (
        "POST /orders/{order_id}/payments",
        "GET /orders/{order_id}/payments",
        "GET /payments",
    ),
    "shopfeed.commerce.routes.shipments": (
        "POST /orders/{order_id}/shipments",
        "GET /orders/{order_id}/shipments/{shipment_id}",
        "PATCH /orders/{order_id}/shipments/{shipment_id}",
        "GET /orders/{order_id}/shipments",
        "GET /shipments",
    ),
    "shopfeed.commerce.routes.inventory": (
        "GET /inventory/snapshots",
        "GET /products/{product_id}/inventory",
        "PUT /products/{product_id}/inventory/{warehouse}",
    ),
}
