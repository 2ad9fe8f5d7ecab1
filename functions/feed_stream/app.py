"""FeedTable stream consumer: ROUTES says what happens when each record type is written or removed.

Each effect is a handler in feed.consumers.feed_stream that gets all its records of the batch, of every
type routed to it (posts and follows count on profiles in one call). FilterCriteria in template.yaml lets
in exactly these types."""

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.feed import bootstrap, items
from shopfeed.feed.consumers import feed_stream as on
from shopfeed.platform import streams, warmup
from shopfeed.platform.observability import logger, metrics

ROUTES: dict[str, streams.Route] = {
    items.POST: (on.fan_out, on.count_on_profiles, on.remove_engagement, on.sync_post_search, on.notify_mentioned),
    items.FOLLOW: (on.count_on_profiles, on.notify, on.count_on_leaderboard, on.settle_follow),
    items.LIKE: (on.count_on_posts, on.notify),
    items.COMMENT: (on.count_on_posts, on.notify, on.notify_mentioned),
}
warmup.prime(*bootstrap.STREAM_PORTS)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return streams.handle_batch(event, ROUTES)
