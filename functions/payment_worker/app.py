"""Payment worker: each PaymentQueue message is one attempt or refund to settle (see
commerce.payments.worker); failed messages are held back on the queue, longer each receive."""

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import bootstrap
from shopfeed.commerce.consumers import payment_worker
from shopfeed.platform import warmup
from shopfeed.platform.observability import logger, metrics

# A batch whose every message failed is answered like any other (each failed message reported and
# held back), not raised: the backoff applies to an outage, when every message fails.
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
warmup.prime(bootstrap.payment_worker_ports, bootstrap.payment_redelivery)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return payment_worker.settle_payments(event, processor)
