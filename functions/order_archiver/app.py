"""Scheduled order archive (ECOM-011): orders older than ArchiveAfterDays leave CommerceTable for S3."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import bootstrap
from shopfeed.commerce.archive import archiver as archive
from shopfeed.platform import warmup
from shopfeed.platform.observability import logger, metrics

warmup.prime(bootstrap.archiver)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int | str]:
    return archive.record_run(archive.run(bootstrap.archiver(), context.get_remaining_time_in_millis))
