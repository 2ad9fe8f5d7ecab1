"""CommerceTable's stream as its consumer receives it: records passed through the template's
FilterCriteria, or delivered by the local stack's stream poller with the template's mapping."""

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import boto3

from local import cfn
from local.filtering import filter_patterns, passes
from local.lambdas import LocalFunction
from local.streams import StreamPoller, StreamSettings
from shopfeed.platform import clients

CONSUMER = "CommerceStreamFunction"


def _mapping() -> dict[str, Any]:
    (event,) = cfn.function_properties(CONSUMER)["Events"].values()
    return dict(event["Properties"])


def routed(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records Lambda would hand the consumer: those its mapping's FilterCriteria let in."""
    patterns = filter_patterns(_mapping()["FilterCriteria"])
    return [record for record in records if passes(patterns, record)]


def commerce_stream_poller(table: str) -> StreamPoller:
    """A poller of ``table``'s stream, in whatever DynamoDB the shared client points at, from the
    stream's start and with the batching window closed at once (a test does not wait for it)."""
    from functions.commerce_stream.app import lambda_handler

    settings = replace(StreamSettings.from_event(_mapping()), batching_window_s=0.0)
    stream_arn = clients.dynamodb().describe_table(TableName=table)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", endpoint_url=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"))
    return StreamPoller(
        function=LocalFunction(CONSUMER, lambda_handler, timeout_s=60),
        stream_arn=stream_arn,
        settings=settings,
        streams=streams,
        source_name=f"{table} stream",
        retry_backoff_s=(0.0,),
    )
