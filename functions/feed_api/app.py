"""Feed HTTP API: posts, media, tags, follows, home feed, likes, comments, notifications, leaderboard,
post search.

Routes live in shopfeed.feed.routes.
"""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.feed import bootstrap
from shopfeed.feed.route_groups import ROUTE_GROUPS
from shopfeed.platform import warmup
from shopfeed.platform.http import lazy_resolver
from shopfeed.platform.observability import logger, metrics

app = lazy_resolver(ROUTE_GROUPS)  # a request imports its route group (decision 233)
warmup.prime(
    *bootstrap.API_PORTS, *bootstrap.API_READS, bootstrap.dry_runs, resolver=app, connections=[bootstrap.warm_search]
)
warmup.after_restore(*bootstrap.API_READS)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
