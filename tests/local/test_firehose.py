"""The analytics export locally: the template's rule -> Firehose -> S3 path on a moto server, with the
objects under the keys Firehose writes (local/firehose.py). The delivery stream is driven one
``pump()`` at a time on a clock the test moves, so nothing sleeps."""

import dataclasses
import gzip
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from local import cfn
from local.engines import Engines
from local.firehose import DeliveryStream, PartitionQuery, UnsupportedExpression, java_time_format, render_prefix
from local.provision import Provisioned

DESTINATION = cfn.load()["Resources"]["AnalyticsDeliveryStream"]["Properties"]["ExtendedS3DestinationConfiguration"]
QUERY = next(
    parameter["ParameterValue"]
    for processor in DESTINATION["ProcessingConfiguration"]["Processors"]
    for parameter in processor.get("Parameters", ())
    if parameter["ParameterName"] == "MetadataExtractionQuery"
)
BUFFER_S = 5
ARRIVAL = datetime(2026, 11, 27, 0, 5, 9, tzinfo=UTC)


# -- the template's query and prefixes, evaluated ----------------------------------------------------


def test_the_templates_query_takes_the_type_and_the_day_of_the_events_own_time() -> None:
    event = {"detail-type": "OrderPlaced", "time": "2026-11-26T23:59:59Z", "detail": {}}
    assert PartitionQuery.parse(QUERY).evaluate(event) == {"type": "OrderPlaced", "day": "2026-11-26"}


@pytest.mark.parametrize(
    "event",
    [{"time": "2026-11-26T23:59:59Z"}, {"detail-type": "OrderPlaced"}, {"detail-type": {"a": 1}, "time": "x"}, []],
    ids=["no-type", "no-time", "type-not-a-value", "not-an-object"],
)
def test_an_event_without_a_type_or_a_time_has_no_partition(event: Any) -> None:
    assert PartitionQuery.parse(QUERY).evaluate(event) is None


@pytest.mark.parametrize(
    "query", ["{type: .detail | keys}", '.["detail-type"]', "{type: .a, day: now}", "{type: .a.b[0]}"]
)
def test_a_query_outside_the_evaluated_subset_is_refused_not_guessed(query: str) -> None:
    with pytest.raises(UnsupportedExpression):
        PartitionQuery.parse(query)


def test_prefixes_render_partition_keys_the_arrival_time_and_the_error_type() -> None:
    keys = {"type": "OrderPlaced", "day": "2026-11-26"}
    assert render_prefix(DESTINATION["Prefix"], ARRIVAL, keys) == "events/type=OrderPlaced/day=2026-11-26/"
    assert (
        render_prefix(DESTINATION["ErrorOutputPrefix"], ARRIVAL, {}, "processing-failed")
        == "errors/processing-failed/day=2026-11-27/"
    )
    assert java_time_format("yyyy/MM/dd/HH") == "%Y/%m/%d/%H"
    with pytest.raises(UnsupportedExpression):
        java_time_format("yyyy-ww")  # week numbers are not evaluated locally
    with pytest.raises(UnsupportedExpression):
        render_prefix("x/!{partitionKeyFromQuery:missing}/", ARRIVAL, keys)


# -- the path on a moto server, provisioned from template.yaml --------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = ARRIVAL

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def stream(provisioned: Provisioned, engines: Engines, clock: Clock) -> DeliveryStream:
    spec = provisioned.deliveries["AnalyticsDeliveryStream"]
    return DeliveryStream(spec, engines.client("sqs"), engines.client("s3"), BUFFER_S, clock=clock)


def publish(engines: Engines, *events: tuple[str, str, str]) -> None:
    """Events on the template's bus, as the outbox relay puts them: (source, type, time)."""
    entries = [
        {
            "EventBusName": "shopfeed-dev",
            "Source": source,
            "DetailType": detail_type,
            "Time": datetime.fromisoformat(time),
            "Detail": json.dumps({"metadata": {"event_id": f"E{n}", "event_type": detail_type}, "data": {}}),
        }
        for n, (source, detail_type, time) in enumerate(events)
    ]
    assert engines.client("events").put_events(Entries=entries)["FailedEntryCount"] == 0


def objects(engines: Engines, prefix: str = "") -> dict[str, list[dict[str, Any]]]:
    """Every object of the analytics bucket under ``prefix``: its records, one JSON document a line."""
    s3 = engines.client("s3")
    found = s3.list_objects_v2(Bucket="analyticsbucket", Prefix=prefix).get("Contents", [])
    return {
        o["Key"]: [
            json.loads(line)
            for line in gzip.decompress(s3.get_object(Bucket="analyticsbucket", Key=o["Key"])["Body"].read())
            .decode()
            .splitlines()
        ]
        for o in found
    }


def in_queue(stream: DeliveryStream) -> int:
    """Messages on the stream's records queue, received or not (not yet deleted)."""
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attributes = stream.sqs.get_queue_attributes(QueueUrl=stream.spec.queue_url, AttributeNames=names)["Attributes"]
    return sum(int(attributes[name]) for name in names)


def test_every_contexts_events_land_by_type_and_day_once_the_buffer_time_has_passed(
    engines: Engines, stream: DeliveryStream, clock: Clock
) -> None:
    # given events of both contexts on the bus, two of one type and day
    publish(
        engines,
        ("shopfeed.commerce", "OrderPlaced", "2026-11-26T10:00:00+00:00"),
        ("shopfeed.commerce", "OrderPlaced", "2026-11-26T11:00:00+00:00"),
        ("shopfeed.commerce", "OrderCancelled", "2026-11-26T12:00:00+00:00"),
        ("shopfeed.feed", "PostCreated", "2026-11-27T00:01:00+00:00"),
    )

    # when the stream takes them in, before its buffer time has passed
    for _ in range(10):  # moto hands out a few messages per receive
        if stream.stats.records_received == 4:
            break
        stream.pump(wait_s=0)

    # then nothing is written yet, and every record is still on the queue
    assert objects(engines) == {}
    assert in_queue(stream) == 4

    # when the buffer time has passed
    clock.now += timedelta(seconds=BUFFER_S)
    assert stream.flush() == 3

    # then each type and day is one gzip object of JSON Lines, named as Firehose names them
    written = objects(engines)
    by_partition = {key.rsplit("/", 1)[0]: records for key, records in written.items()}
    assert sorted(by_partition) == [
        "events/type=OrderCancelled/day=2026-11-26",
        "events/type=OrderPlaced/day=2026-11-26",
        "events/type=PostCreated/day=2026-11-27",
    ]
    placed = by_partition["events/type=OrderPlaced/day=2026-11-26"]
    assert [r["detail"]["metadata"]["event_id"] for r in placed] == ["E0", "E1"]
    assert {r["source"] for r in placed} == {"shopfeed.commerce"}
    for key in written:
        name = key.rsplit("/", 1)[1]
        assert name.startswith("AnalyticsDeliveryStream-1-2026-11-27-00-05-09-")
        assert name.endswith(".gz")

    # and the records left the stream's queue once written
    assert in_queue(stream) == 0


def test_an_event_of_another_source_is_not_exported(engines: Engines, stream: DeliveryStream) -> None:
    # when an event of a source outside shopfeed is put on the bus
    publish(engines, ("partner.payments", "Settled", "2026-11-26T10:00:00+00:00"))

    # then the rule does not take it
    stream.pump(wait_s=0)
    assert stream.stats.records_received == 0


def test_a_record_without_partition_keys_lands_under_the_error_prefix(
    provisioned: Provisioned, engines: Engines, stream: DeliveryStream
) -> None:
    # given a record the query cannot partition (in the stream's queue, as a rule would put it)
    engines.client("sqs").send_message(QueueUrl=stream.spec.queue_url, MessageBody=json.dumps({"source": "x"}))

    # when the stream takes it and writes what it holds
    stream.pump(wait_s=0)
    stream.flush(everything=True)

    # then it is under the error prefix, wrapped as Firehose wraps a failed record
    (key,) = objects(engines)
    assert key.startswith("errors/processing-failed/day=2026-11-27/")
    (record,) = objects(engines)[key]
    assert record["errorCode"] == "DynamicPartitioning.MetadataExtractionFailed"
    assert stream.stats.records_failed == 1


def test_a_full_buffer_is_written_at_once_and_a_stopping_stream_writes_what_it_holds(
    engines: Engines, stream: DeliveryStream, clock: Clock
) -> None:
    # given a stream whose size hint one record fills
    full = DeliveryStream(dataclasses.replace(stream.spec, size_bytes=1), stream.sqs, stream.s3, BUFFER_S, clock=clock)
    publish(engines, ("shopfeed.commerce", "OrderPlaced", "2026-11-26T10:00:00+00:00"))

    # when it takes the record in, long before its buffer time
    assert full.pump(wait_s=0) == 1

    # then the object is written at once
    assert len(objects(engines)) == 1

    # and given a record buffered in the regular stream, when the stack stops it
    publish(engines, ("shopfeed.commerce", "OrderCancelled", "2026-11-26T11:00:00+00:00"))
    stream.pump(wait_s=0)
    assert in_queue(stream) == 1
    stream.stop.set()
    stream.run()

    # then it writes what it holds before it returns
    assert in_queue(stream) == 0
    assert any(key.startswith("events/type=OrderCancelled/day=2026-11-26/") for key in objects(engines))
