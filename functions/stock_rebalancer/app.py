"""Stock rebalancer: the stream records of buckets left below the low-water mark even out their products.

A second reader of the CommerceTable stream, beside the commerce stream consumer: its event source
mapping's FilterCriteria (template.yaml) lets in only bucket records below ``RebalanceLowWater``, so a
sale's other writes never invoke it (decision 168).
"""

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import bootstrap, items
from shopfeed.commerce.consumers import stock_rebalancer as on
from shopfeed.platform import streams, warmup
from shopfeed.platform.observability import logger, metrics

ROUTES: dict[str, streams.RecordTypeHandler] = {items.STOCK_BUCKET: on.rebalance_stock}
warmup.prime(bootstrap.rebalancer)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return streams.handle_batch(event, ROUTES)
