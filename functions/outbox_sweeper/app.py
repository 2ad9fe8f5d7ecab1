"""Scheduled outbox sweeper: re-publishes events the stream relay left unpublished."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import bootstrap
from shopfeed.platform import outbox_relay, warmup
from shopfeed.platform.clock import utc_now
from shopfeed.platform.observability import logger, metrics

warmup.prime(bootstrap.sweeper_ports)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int]:
    publisher, repository, unpublished_for = bootstrap.sweeper_ports()
    return outbox_relay.record_sweep(outbox_relay.sweep(publisher, repository, utc_now(), unpublished_for))
