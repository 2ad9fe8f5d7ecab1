"""Scheduled payment-window sweeper: expires orders not paid within PaymentWindowMinutes, restocking them."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import bootstrap
from shopfeed.commerce.orders import expiry
from shopfeed.platform import warmup
from shopfeed.platform.observability import logger, metrics

warmup.prime(bootstrap.expiry_job)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int | str]:
    return expiry.record_run(expiry.run(bootstrap.expiry_job(), context.get_remaining_time_in_millis))
