"""CommerceTable stream consumer: each record type goes to its handler (today: the outbox relay).

The event source mapping's FilterCriteria (template.yaml) lets in only the record types routed here.
To consume another type, add its handler to ROUTES and widen the filter.
"""

from collections.abc import Sequence
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.commerce import items, outbox
from shopfeed.commerce.settings import CommerceStreamSettings
from shopfeed.platform import streams
from shopfeed.platform.clock import utc_now
from shopfeed.platform.config import settings
from shopfeed.platform.observability import logger, metrics

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


def relay_outbox_events(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """New outbox items → the event bus. An event the bus refused fails only its own record."""
    # A MODIFY is this relay marking the item published, a REMOVE is TTL: only INSERTs are news.
    inserted = [change for change in changes if change.kind is streams.ChangeKind.INSERT]
    events, failures = streams.parse_images(inserted, items.outbox_event_from)
    publisher, repository = outbox.ports(settings(CommerceStreamSettings))
    report = outbox.relay(list(events.values()), publisher, repository, utc_now())
    for sequence_number, event in events.items():
        if refused := report.failures.get(event.event_id):
            failures[sequence_number] = refused
    for sequence_number, error in failures.items():
        logger.warning("outbox event not published", sequence_number=sequence_number, error=str(error))
    metrics.add_metric(name="OutboxEventPublished", unit="Count", value=len(report.published))
    metrics.add_metric(name="OutboxPublishFailed", unit="Count", value=len(failures))
    return failures


ROUTES: dict[str, streams.RecordTypeHandler] = {
    items.OUTBOX_EVENT: relay_outbox_events,
}


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    outcome = streams.route(event["Records"], ROUTES)
    return process_partial_response(event, record_handler=outcome.settle, processor=processor, context=context)
