"""CommerceTable's stream as its consumer receives it: records passed through the template's
FilterCriteria, or delivered by the local stack's stream poller with the template's mapping."""

from collections.abc import Sequence
from typing import Any

from local import cfn
from local.filtering import filter_patterns, passes
from local.harness.feed_stream import stream_poller
from local.streams import StreamPoller

CONSUMER = "CommerceStreamFunction"


def _mapping(consumer: str) -> dict[str, Any]:
    (event,) = cfn.function_properties(consumer)["Events"].values()
    return dict(event["Properties"])


def routed(records: Sequence[dict[str, Any]], consumer: str = CONSUMER) -> list[dict[str, Any]]:
    """The records Lambda would hand ``consumer`` (a reader of the stream): those its mapping's
    FilterCriteria let in."""
    patterns = filter_patterns(_mapping(consumer)["FilterCriteria"])
    return [record for record in records if passes(patterns, record)]


def commerce_stream_poller(table: str) -> StreamPoller:
    """A poller of ``table``'s stream, in whatever DynamoDB the shared client points at, from the
    stream's start and with the batching window closed at once (a test does not wait for it)."""
    from functions.commerce_stream.app import lambda_handler

    return stream_poller(table, CONSUMER, lambda_handler)
