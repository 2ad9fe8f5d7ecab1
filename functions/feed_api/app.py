"""Feed HTTP API: posts, media, tags, follows, home feed, likes, comments, notifications, leaderboard,
post search.

Routes live in shopfeed.feed.routes.
"""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.feed import bootstrap
from shopfeed.platform import warmup
from shopfeed.platform.http import lazy_resolver
from shopfeed.platform.observability import logger, metrics

# The route group that serves each route API Gateway names in the event (its routeKey): the import
# loads none, a request loads its own on first use, priming loads them all (decisions 233–234).
# tests/unit/test_route_groups.py fails when this table and the routers or template.yaml disagree.
ROUTE_GROUPS = {
    "shopfeed.feed.routes.posts": (
        "POST /posts",
        "GET /posts/{post_id}",
        "DELETE /posts/{post_id}",
        "GET /users/{user_id}/posts",
        "GET /tags/{tag}/posts",
    ),
    "shopfeed.feed.routes.follows": (
        "PUT /users/{user_id}/followers/me",
        "DELETE /users/{user_id}/followers/me",
        "GET /users/{user_id}/followers",
        "GET /users/{user_id}/following",
    ),
    "shopfeed.feed.routes.home": ("GET /feed",),
    "shopfeed.feed.routes.likes": (
        "PUT /posts/{post_id}/likes/me",
        "DELETE /posts/{post_id}/likes/me",
        "GET /posts/{post_id}/likes",
    ),
    "shopfeed.feed.routes.comments": (
        "POST /posts/{post_id}/comments",
        "GET /posts/{post_id}/comments",
        "DELETE /posts/{post_id}/comments/{comment_id}",
        "GET /users/{user_id}/comments",
    ),
    "shopfeed.feed.routes.notifications": (
        "GET /notifications",
        "POST /notifications/read",
        "POST /notifications/{notification_id}/read",
        "GET /leaderboards/authors",
    ),
    "shopfeed.feed.routes.search": ("GET /search/posts",),
    "shopfeed.feed.routes.media": ("POST /media",),
}
app = lazy_resolver(ROUTE_GROUPS)
warmup.prime(*bootstrap.API_PORTS, *bootstrap.API_READS, bootstrap.dry_runs, resolver=app)
warmup.after_restore(*bootstrap.API_READS)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
