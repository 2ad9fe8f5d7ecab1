"""Commerce HTTP API: users (both halves, shopfeed.accounts), catalog, stock, product search, reviews,
cart, orders, payments, shipments and inventory snapshots."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.accounts import bootstrap as accounts
from shopfeed.commerce import bootstrap
from shopfeed.commerce.route_groups import ROUTE_GROUPS
from shopfeed.platform import warmup
from shopfeed.platform.http import lazy_resolver
from shopfeed.platform.observability import logger, metrics

app = lazy_resolver(ROUTE_GROUPS)  # a request imports its route group (decision 233)


def dry_runs() -> None:
    """The DynamoDB operations of the routes, once each on both tables, answered in process (decision 216)."""
    warmup.dry_run_dynamodb(bootstrap.api_table(), *accounts.tables())


warmup.prime(*bootstrap.API_PORTS, accounts.accounts, dry_runs, resolver=app, connections=[bootstrap.warm_search])


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
