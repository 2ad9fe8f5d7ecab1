"""Fanout worker: each FanoutQueue message is one page of a post's followers (see feed.home.fanout), or
one follow or unfollow settled in the follower's feed (feed.home.backfill)."""

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.feed import bootstrap
from shopfeed.feed.consumers import fanout_worker
from shopfeed.platform import warmup
from shopfeed.platform.observability import logger, metrics

processor = BatchProcessor(event_type=EventType.SQS)
warmup.prime(*bootstrap.WORKER_PORTS)


def fan_out_page(record: SQSRecord) -> None:
    fanout_worker.fan_out_page(record.body)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event, record_handler=fan_out_page, processor=processor, context=context)
