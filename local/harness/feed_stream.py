"""FeedTable's stream delivered to the feed stream consumer with the template's event source mapping,
through the local stack's stream poller (filter, batch size, partial batch responses, retries)."""

import os
from dataclasses import replace

import boto3

from local import cfn
from local.lambdas import Handler, LocalFunction
from local.streams import StreamPoller, StreamSettings
from shopfeed.platform import clients

CONSUMER = "FeedStreamFunction"


def feed_stream_poller(table: str) -> StreamPoller:
    """A poller of ``table``'s stream, in whatever DynamoDB the shared client points at, from the
    stream's start and with the batching window closed at once (a test does not wait for it)."""
    from functions.feed_stream.app import lambda_handler

    return stream_poller(table, CONSUMER, lambda_handler)


def stream_poller(table: str, consumer: str, handler: Handler) -> StreamPoller:
    """``feed_stream_poller`` for any stream consumer of the template: ``handler`` run as ``consumer``
    with its mapping's settings (its one event), the batching window closed."""
    (event,) = cfn.function_properties(consumer)["Events"].values()
    settings = replace(StreamSettings.from_event(event["Properties"]), batching_window_s=0.0)
    stream_arn = clients.dynamodb().describe_table(TableName=table)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", endpoint_url=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"))
    return StreamPoller(
        function=LocalFunction(consumer, handler, timeout_s=60),
        stream_arn=stream_arn,
        settings=settings,
        streams=streams,
        source_name=f"{table} stream",
        retry_backoff_s=(0.0,),
    )


def deliver_all(poller: StreamPoller, rounds: int = 200) -> None:
    """Poll until a round moves nothing (bounded: a poller that never settles fails the test)."""
    for _ in range(rounds):
        if not poller.poll():
            return
    raise AssertionError(f"the feed stream poller still had work after {rounds} rounds")
