"""Payment worker: each PaymentQueue message is one attempt to settle (see commerce.payment_worker)."""

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import bootstrap, consumers
from shopfeed.platform import warmup
from shopfeed.platform.observability import logger, metrics

processor = BatchProcessor(event_type=EventType.SQS)
warmup.prime(bootstrap.payment_worker_ports)


def settle(record: SQSRecord) -> None:
    consumers.settle_payment(record.body)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event, record_handler=settle, processor=processor, context=context)
