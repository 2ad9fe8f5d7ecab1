"""FeedTable stream consumer: ROUTES says what happens when each record type is written or removed.

Each effect is a handler in feed.consumers that gets all its records of the batch, of every type routed
to it (posts and follows count on profiles in one call). FilterCriteria in template.yaml lets in exactly
these types."""

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.feed import bootstrap, items
from shopfeed.feed.consumers import (
    count_on_leaderboard,
    count_on_posts,
    count_on_profiles,
    fan_out,
    notify,
    remove_engagement,
    sync_post_search,
)
from shopfeed.platform import streams, warmup
from shopfeed.platform.observability import logger, metrics

ROUTES: dict[str, streams.Route] = {
    items.POST: (fan_out, count_on_profiles, remove_engagement, sync_post_search),
    items.FOLLOW: (count_on_profiles, notify, count_on_leaderboard),
    items.LIKE: (count_on_posts, notify),
    items.COMMENT: (count_on_posts, notify),
}
warmup.prime(*bootstrap.STREAM_PORTS)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return streams.handle_batch(event, ROUTES)
