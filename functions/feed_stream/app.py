"""FeedTable stream consumer: each record type goes to its handler in the feed package.

The event source mapping's FilterCriteria (template.yaml) lets in exactly the record types routed
here (a template test compares). Posts and follows share one handler: both count on profiles, and
one call per batch writes each profile once.
"""

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.feed import fanout, items, stream
from shopfeed.feed.settings import FanoutSettings
from shopfeed.platform import streams, warmup
from shopfeed.platform.config import settings
from shopfeed.platform.observability import logger, metrics

ROUTES: dict[str, streams.RecordTypeHandler] = {
    items.POST: stream.count_and_fan_out,
    items.FOLLOW: stream.count_and_fan_out,
}
warmup.prime(lambda: fanout.ports(settings(FanoutSettings)))


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return streams.handle_batch(event, ROUTES)
