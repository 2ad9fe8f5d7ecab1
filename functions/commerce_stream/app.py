"""CommerceTable stream consumer: each record type goes to its handler in the commerce package.

The event source mapping's FilterCriteria (template.yaml) lets in exactly the record types routed
here (a template test compares). To consume another type, add its handler to ROUTES and widen the filter.
"""

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import bootstrap, items
from shopfeed.commerce.consumers import commerce_stream as on
from shopfeed.commerce.reviews import ratings
from shopfeed.platform import streams, warmup
from shopfeed.platform.observability import logger, metrics

ROUTES: dict[str, streams.RecordTypeHandler] = {
    items.OUTBOX_EVENT: on.relay_outbox_events,
    items.PRODUCT: on.sync_product_search,
    # Reviews (written, edited, deleted) keep their product's rating counters.
    items.REVIEW: ratings.count_ratings,
    items.PAYMENT_ATTEMPT: on.queue_payment_attempts,
}
warmup.prime(bootstrap.relay_ports, bootstrap.search_sync_queue, bootstrap.stream_table, bootstrap.payment_queue)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return streams.handle_batch(event, ROUTES)
