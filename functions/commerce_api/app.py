"""Commerce HTTP API: customers, catalog, stock and orders (routes in shopfeed.commerce.routes)."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce.routes import deps, orders, products, users
from shopfeed.platform import warmup
from shopfeed.platform.http import build_resolver
from shopfeed.platform.observability import logger, metrics

app = build_resolver(users.router, products.router, orders.router)
warmup.prime(deps.commerce_store, resolver=app)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
