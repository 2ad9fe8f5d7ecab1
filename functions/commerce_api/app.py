"""Commerce HTTP API: users (both halves, shopfeed.accounts), catalog, stock, product search, orders and
inventory snapshots."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.accounts import bootstrap as accounts
from shopfeed.accounts import routes as users
from shopfeed.commerce import bootstrap
from shopfeed.commerce.routes import inventory, orders, products, search
from shopfeed.platform import warmup
from shopfeed.platform.http import build_resolver
from shopfeed.platform.observability import logger, metrics

app = build_resolver(users.router, products.router, search.router, orders.router, inventory.router)
warmup.prime(bootstrap.repository, accounts.accounts, resolver=app)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
