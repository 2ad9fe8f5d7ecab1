"""FeedTable stream consumer: each record type goes to its handler in the feed package.

The event source mapping's FilterCriteria (template.yaml) lets in exactly the record types routed
here (a template test compares). Every type shares one handler: posts and follows count on profiles,
likes and comments on posts, follows on the leaderboard, and one call per batch writes each target once.
Posts also go to the post search sync.
"""

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.feed import fanout, items, search, social_stream
from shopfeed.feed.settings import FanoutSettings
from shopfeed.platform import streams, warmup
from shopfeed.platform.config import settings
from shopfeed.platform.observability import logger, metrics

ROUTES: dict[str, streams.Route] = {
    # A post also reaches the search index (its MODIFY only there: a counter changing is no fanout).
    items.POST: (social_stream.handle, search.sync_post_search),
    items.FOLLOW: social_stream.handle,
    items.LIKE: social_stream.handle,
    items.COMMENT: social_stream.handle,
}
warmup.prime(lambda: fanout.ports(settings(FanoutSettings)), search.search_index)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return streams.handle_batch(event, ROUTES)
