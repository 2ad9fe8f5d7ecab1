"""Daily inventory snapshot: every product's stock level, kept SnapshotRetentionDays, read by ops."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import bootstrap
from shopfeed.commerce.inventory import snapshots
from shopfeed.platform import warmup
from shopfeed.platform.clock import utc_now
from shopfeed.platform.observability import logger, metrics

warmup.prime(bootstrap.snapshot_job)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int | str]:
    return snapshots.record_snapshot(snapshots.run(bootstrap.snapshot_job(), utc_now()))
