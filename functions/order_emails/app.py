"""Order email worker: each EmailQueue message is one commerce event from the bus; the customer gets
one email per event id, however often it comes (see commerce.emails.worker)."""

from typing import Any

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import bootstrap
from shopfeed.commerce.emails import worker
from shopfeed.platform import warmup
from shopfeed.platform.observability import logger, metrics

warmup.prime(bootstrap.email_ports)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return worker.handle_messages(event, bootstrap.email_ports(), context.get_remaining_time_in_millis)
