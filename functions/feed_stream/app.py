"""FeedTable stream consumer: each record type goes to its handler in the feed package.

The event source mapping's FilterCriteria (template.yaml) lets in only the record types routed here.
"""

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.feed import items, stream
from shopfeed.platform import streams
from shopfeed.platform.observability import logger, metrics

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)

ROUTES: dict[str, streams.RecordTypeHandler] = {
    items.POST: stream.on_posts,
}


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    outcome = streams.route(event["Records"], ROUTES)
    return process_partial_response(event, record_handler=outcome.settle, processor=processor, context=context)
