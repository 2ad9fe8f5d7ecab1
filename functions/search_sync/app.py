"""Search sync worker: each SearchSyncQueue message is one versioned index write a stream consumer
queued (products, posts); a batch is one bulk request per index, and a write the engine could not
take is held back on the queue, longer each time it fails (see platform.search.sync)."""

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.indexing import bootstrap
from shopfeed.platform import warmup
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.search import sync as search_sync

warmup.prime(*bootstrap.WORKER_PORTS)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return search_sync.apply_messages(event, bootstrap.INDEXES, bootstrap.engine(), bootstrap.queue())
