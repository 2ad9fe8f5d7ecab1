"""Commerce HTTP API: users (both halves, shopfeed.accounts), catalog, stock, product search, reviews,
cart, orders, payments, shipments and inventory snapshots."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.accounts import bootstrap as accounts
from shopfeed.commerce import bootstrap
from shopfeed.platform import warmup
from shopfeed.platform.http import lazy_resolver
from shopfeed.platform.observability import logger, metrics

# The route group that serves each route API Gateway names in the event (its routeKey): the import
# loads none, a request loads its own on first use, priming loads them all (decisions 233–234).
# tests/unit/test_route_groups.py fails when this table and the routers or template.yaml disagree.
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
app = lazy_resolver(ROUTE_GROUPS)


def dry_runs() -> None:
    """The DynamoDB operations of the routes, once each on both tables, answered in process (decision 216)."""
    warmup.dry_run_dynamodb(bootstrap.api_table(), *accounts.tables())


warmup.prime(*bootstrap.API_PORTS, accounts.accounts, dry_runs, resolver=app)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
