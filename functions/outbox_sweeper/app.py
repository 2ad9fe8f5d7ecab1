"""Scheduled outbox sweeper: re-publishes events the stream relay left unpublished."""

from datetime import timedelta
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import outbox
from shopfeed.commerce.settings import CommerceSweeperSettings
from shopfeed.platform import warmup
from shopfeed.platform.clock import utc_now
from shopfeed.platform.config import settings
from shopfeed.platform.observability import logger, metrics

warmup.prime(lambda: outbox.ports(settings(CommerceSweeperSettings)))


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int]:
    config = settings(CommerceSweeperSettings)
    report = outbox.sweep(*outbox.ports(config), utc_now(), timedelta(seconds=config.outbox_sweep_after_seconds))
    for failure in report.failures.values():
        logger.warning("outbox event still unpublished", event_id=failure.event_id, code=failure.code)
    metrics.add_metric(name="OutboxEventRedriven", unit="Count", value=len(report.published))
    metrics.add_metric(name="OutboxPublishFailed", unit="Count", value=len(report.failures))
    logger.info("outbox swept", extra=report.counts)
    return report.counts
