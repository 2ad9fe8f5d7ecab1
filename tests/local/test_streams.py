"""DynamoDB stream pollers: the event source mapping semantics a stream consumer relies on."""

import json
import time
from typing import Any

import pytest
from aws_lambda_powertools.utilities.parser.models import (
    DynamoDBStreamLambdaOnFailureDestinationModel,
    DynamoDBStreamModel,
)

from local.filtering import filter_patterns
from local.streams import POLL_INTERVAL_S, QUIET_AFTER_S, QUIET_POLL_INTERVAL_S, StreamSettings, poll_wait
from tests.local.conftest import Queue, StreamTable, TestConsumer, drain

REPORTING = {"report_batch_item_failures": True, "starting_position": "TRIM_HORIZON"}


def on_failure_records(dlq: Queue) -> list[dict[str, Any]]:
    return [json.loads(body) for body in dlq.messages()]


def test_records_reach_the_consumer_as_lambda_shapes_them(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any
) -> None:
    # given an insert, an update and a delete of one item
    stream_table.put("a", colour="red")
    stream_table.put("a", colour="blue")
    stream_table.client.delete_item(TableName="PollerItems", Key={"id": {"S": "a"}})

    # when the poller runs
    drain(make_poller(StreamSettings(starting_position="TRIM_HORIZON")))

    # then one event carries the three records, valid for Powertools' model of Lambda's event
    (event,) = consumer.events
    DynamoDBStreamModel.model_validate(event)
    insert, modify, remove = event["Records"]
    assert [r["eventName"] for r in event["Records"]] == ["INSERT", "MODIFY", "REMOVE"]
    assert insert["eventSource"] == "aws:dynamodb"
    assert insert["eventSourceARN"] == stream_table.stream_arn
    assert insert["awsRegion"] == "us-east-1"
    assert isinstance(insert["dynamodb"]["ApproximateCreationDateTime"], int)
    assert abs(insert["dynamodb"]["ApproximateCreationDateTime"] - time.time()) < 120
    assert modify["dynamodb"]["OldImage"]["colour"] == {"S": "red"}
    assert modify["dynamodb"]["NewImage"]["colour"] == {"S": "blue"}
    assert "NewImage" not in remove["dynamodb"]
    assert remove["dynamodb"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"


def test_binary_attributes_reach_the_consumer_in_base64_as_lambda_sends_them(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any
) -> None:
    # given an item with a binary attribute
    stream_table.client.put_item(TableName="PollerItems", Item={"id": {"S": "a"}, "blob": {"B": b"\x00\xff"}})

    # when the poller runs
    drain(make_poller(StreamSettings(starting_position="TRIM_HORIZON")))

    # then the record carries it as the stream's JSON spells it, base64
    (record,) = consumer.events[0]["Records"]
    assert record["dynamodb"]["NewImage"]["blob"] == {"B": "AP8="}
    assert record["dynamodb"]["Keys"] == {"id": {"S": "a"}}


def test_batches_hold_at_most_batch_size_records_in_stream_order(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any
) -> None:
    # given five new items
    for name in "abcde":
        stream_table.put(name)

    # when the mapping's batch size is two
    drain(make_poller(StreamSettings(batch_size=2, starting_position="TRIM_HORIZON")))

    # then they arrive in order, two at a time
    assert consumer.batches == [["a", "b"], ["c", "d"], ["e"]]


def _windowed(make_poller: Any, batch_size: int) -> tuple[Any, list[float]]:
    """A poller with a ten-second batching window, and the clock it reads (moved by the test)."""
    now = [time.time()]
    settings = StreamSettings(batch_size=batch_size, batching_window_s=10, starting_position="TRIM_HORIZON")
    return make_poller(settings, clock=lambda: now[0]), now


def test_the_batching_window_holds_a_partial_batch_until_it_closes(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any
) -> None:
    # given a ten-second window, a clock we move, and two records: fewer than a batch
    poller, now = _windowed(make_poller, batch_size=5)
    stream_table.put("a")
    stream_table.put("b")

    # when the window is still open, nothing is invoked
    drain(poller)
    assert consumer.batches == []

    # when it has closed, the partial batch goes
    now[0] += 11
    drain(poller)
    assert consumer.batches == [["a", "b"]]


def test_starting_position_latest_skips_what_was_written_before_the_mapping_started(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any
) -> None:
    # given a record written before the poller started at LATEST
    stream_table.put("before")
    poller = make_poller(StreamSettings(starting_position="LATEST"))
    drain(poller)

    # when another is written after
    stream_table.put("after")
    drain(poller)

    # then only that one is delivered
    assert consumer.delivered == ["after"]


WANTED_ONLY = StreamSettings(
    filters=filter_patterns({"Filters": [{"Pattern": '{"dynamodb": {"NewImage": {"kind": {"S": ["wanted"]}}}}'}]}),
    starting_position="TRIM_HORIZON",
)


def test_filter_criteria_keep_unwanted_records_from_the_consumer(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any
) -> None:
    # given a filter for items of kind "wanted"
    poller = make_poller(WANTED_ONLY)
    stream_table.put("a", kind="wanted")
    stream_table.put("b", kind="other")
    stream_table.put("c", kind="wanted")

    # when the poller runs
    drain(poller)

    # then the others never reach the consumer, and do not split the batch
    assert consumer.batches == [["a", "c"]]
    assert poller.stats.records_filtered_out == 1


def test_a_partial_failure_checkpoints_before_the_failed_record_and_retries_from_it(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any, dlq: Queue
) -> None:
    # given b fails once, reported as a batch item failure
    stream_table.put("a")
    stream_table.put("b", fails=1)
    stream_table.put("c")

    # when the poller runs
    drain(make_poller(StreamSettings(**REPORTING)))

    # then a is not sent again: the retry starts at b
    assert consumer.batches == [["a", "b", "c"], ["b", "c"]]
    assert dlq.messages() == []


def test_the_lowest_reported_failure_is_the_checkpoint(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any
) -> None:
    # given two records of the batch fail once
    for name in "abcd":
        stream_table.put(name, fails=1 if name in "bd" else 0)

    # when the poller runs
    drain(make_poller(StreamSettings(**REPORTING)))

    # then the retry starts at the first of them
    assert consumer.batches[:2] == [["a", "b", "c", "d"], ["b", "c", "d"]]


def test_an_empty_item_identifier_fails_the_whole_batch(
    stream_table: StreamTable, make_poller: Any, consumer: TestConsumer
) -> None:
    # given a consumer that answers an empty identifier once
    answers = iter([{"batchItemFailures": [{"itemIdentifier": ""}]}])

    def consume(event: dict[str, Any], context: Any) -> Any:
        consumer(event, context)
        return next(answers, {"batchItemFailures": []})

    poller = make_poller(StreamSettings(**REPORTING))
    poller.function.handler = consume
    stream_table.put("a")
    stream_table.put("b")

    # when the poller runs
    drain(poller)

    # then the whole batch is retried
    assert consumer.batches == [["a", "b"], ["a", "b"]]


def test_reported_failures_are_ignored_without_report_batch_item_failures(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any
) -> None:
    # given b would be reported failed, but the mapping does not read the response
    stream_table.put("a")
    stream_table.put("b", fails=-1)

    # when the poller runs
    drain(make_poller(StreamSettings(starting_position="TRIM_HORIZON")))

    # then the batch counts as a success
    assert consumer.batches == [["a", "b"]]


def test_a_function_error_bisects_the_batch_until_the_poison_record_is_alone(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any, dlq: Queue
) -> None:
    # given c makes the consumer raise, every time
    for name in "abcd":
        stream_table.put(name, raises=-1 if name == "c" else 0)
    settings = StreamSettings(bisect_on_error=True, maximum_retry_attempts=2, **REPORTING)

    # when the poller runs
    drain(make_poller(settings))

    # then halving isolates c, which alone uses up its retries; the rest is delivered
    assert consumer.batches == [["a", "b", "c", "d"], ["a", "b"], ["c", "d"], ["c"], ["c"], ["c"], ["d"]]
    (record,) = on_failure_records(dlq)
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert record["DDBStreamBatchInfo"]["batchSize"] == 1
    assert record["DDBStreamBatchInfo"]["startSequenceNumber"] == record["DDBStreamBatchInfo"]["endSequenceNumber"]
    assert record["responseContext"]["functionError"] == "Unhandled"


def test_without_bisect_a_function_error_retries_the_whole_batch(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any, dlq: Queue
) -> None:
    # given b makes the consumer raise twice
    for name in "abc":
        stream_table.put(name, raises=2 if name == "b" else 0)

    # when the poller runs without bisecting
    drain(make_poller(StreamSettings(maximum_retry_attempts=5, **REPORTING)))

    # then the whole batch is retried until it passes, and nothing is discarded
    assert consumer.batches == [["a", "b", "c"]] * 3
    assert dlq.messages() == []


def test_exhausted_retries_send_the_shard_and_sequence_range_to_the_on_failure_queue(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any, dlq: Queue
) -> None:
    # given b always fails and the mapping retries twice
    stream_table.put("a")
    stream_table.put("b", fails=-1)
    stream_table.put("c")
    poller = make_poller(StreamSettings(maximum_retry_attempts=2, **REPORTING))

    # when the poller runs
    drain(poller)

    # then the failing tail was tried three times, then reported where it lies in the stream
    assert consumer.batches == [["a", "b", "c"], ["b", "c"], ["b", "c"]]
    (record,) = on_failure_records(dlq)
    DynamoDBStreamLambdaOnFailureDestinationModel.model_validate(record)
    sequence = dict(zip("abc", _sequence_numbers(consumer), strict=True))
    info = record["DDBStreamBatchInfo"]
    assert info["startSequenceNumber"] == sequence["b"]
    assert info["endSequenceNumber"] == sequence["c"]
    assert info["batchSize"] == 2
    assert info["streamArn"] == stream_table.stream_arn
    assert info["shardId"].startswith("shardId-")
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == 3
    assert record["requestContext"]["functionArn"].endswith(":function:TestConsumer")
    assert "Records" not in json.dumps(record)  # the records themselves are not in it, as in AWS

    # and the shard moves on to later records
    stream_table.put("d")
    drain(poller)
    assert consumer.batches[-1] == ["d"]


def test_records_older_than_the_maximum_age_are_reported_without_invoking(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any, dlq: Queue
) -> None:
    # given records read two hours after they were written, with a one-hour maximum age
    stream_table.put("a")
    stream_table.put("b")
    poller = make_poller(StreamSettings(maximum_record_age_s=3600, **REPORTING), clock=lambda: time.time() + 7200)

    # when the poller runs
    drain(poller)

    # then the consumer never sees them and the destination learns why
    assert consumer.batches == []
    (record,) = on_failure_records(dlq)
    assert record["requestContext"]["condition"] == "RecordAgeExceeded"
    assert record["requestContext"]["approximateInvokeCount"] == 0
    assert record["DDBStreamBatchInfo"]["batchSize"] == 2


def test_records_that_age_out_while_retried_stop_being_retried(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any, dlq: Queue
) -> None:
    # given a record that always fails, and a clock that moves an hour per invocation
    now = [time.time()]

    def consume(event: dict[str, Any], context: Any) -> Any:
        now[0] += 3600
        return consumer(event, context)

    poller = make_poller(StreamSettings(maximum_record_age_s=5400, **REPORTING), clock=lambda: now[0])
    poller.function.handler = consume
    stream_table.put("a", fails=-1)

    # when the poller runs with unlimited retries
    drain(poller)

    # then the age limit ends the retries
    assert consumer.batches == [["a"], ["a"]]
    (record,) = on_failure_records(dlq)
    assert record["requestContext"]["condition"] == "RecordAgeExceeded"


def _sequence_numbers(consumer: TestConsumer) -> list[str]:
    return [r["dynamodb"]["SequenceNumber"] for r in consumer.events[0]["Records"]]


def test_a_quiet_stream_is_polled_once_a_second_and_a_busy_one_at_lambdas_pace() -> None:
    # a batch went or a full page was read: the next poll at once
    assert poll_wait(True, None, quiet_for_s=0.0) == 0.0
    assert poll_wait(True, 0.5, quiet_for_s=600.0) == 0.0
    # records held by an open window: Lambda's pace, or the window's close when that comes sooner
    assert poll_wait(False, 9.0, quiet_for_s=0.0) == POLL_INTERVAL_S == 0.25
    assert poll_wait(False, 0.1, quiet_for_s=0.0) == 0.1
    assert poll_wait(False, -0.5, quiet_for_s=0.0) == 0.0
    # nothing lately, but within the quiet spell: Lambda's four polls a second
    assert poll_wait(False, None, quiet_for_s=QUIET_AFTER_S - 0.1) == POLL_INTERVAL_S
    # quiet for longer: once a second, until records come again
    assert poll_wait(False, None, quiet_for_s=QUIET_AFTER_S) == QUIET_POLL_INTERVAL_S == 1.0


def test_records_read_into_an_open_window_wait_for_the_next_poll_and_a_delivered_batch_does_not(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any
) -> None:
    # given a ten-second window of up to three records, a clock we move, and one record
    poller, now = _windowed(make_poller, batch_size=3)
    stream_table.put("a")

    # when it is read into the window, the next poll comes at Lambda's pace, not at once (under
    # steady writes, polling at once read one record a poll into the same batch, without pause)
    assert poller.poll() == 1
    assert poller.next_wait(quiet_for_s=0.0) == POLL_INTERVAL_S

    # and when the window is about to close, at its close
    now[0] += 9.9
    assert poller.next_wait(quiet_for_s=0.0) == pytest.approx(0.1)

    # when the batch fills and goes, the next poll comes at once: more may be waiting
    stream_table.put("b")
    stream_table.put("c")
    assert poller.poll() == 5  # two read, three delivered
    assert consumer.batches == [["a", "b", "c"]]
    assert poller.next_wait(quiet_for_s=0.0) == 0.0

    # and once a poll finds nothing, Lambda's pace again
    assert poller.poll() == 0
    assert poller.next_wait(quiet_for_s=0.0) == POLL_INTERVAL_S


def test_records_the_filter_drops_do_not_make_the_poller_read_again_at_once(
    stream_table: StreamTable, consumer: TestConsumer, make_poller: Any
) -> None:
    # given a filter for items of kind "wanted", and a record of another kind
    poller = make_poller(WANTED_ONLY)
    stream_table.put("b", kind="other")

    # when it is read and dropped, the next poll comes at Lambda's pace
    assert poller.poll() == 1
    assert consumer.batches == []
    assert poller.next_wait(quiet_for_s=0.0) == POLL_INTERVAL_S


def test_a_partial_batch_in_its_batching_window_keeps_the_poller_at_lambdas_pace(
    make_poller: Any, stream_table: StreamTable
) -> None:
    # given a record read and held by a batching window
    poller = make_poller(StreamSettings(batch_size=10, batching_window_s=60, starting_position="TRIM_HORIZON"))
    stream_table.put("a")
    assert not poller.buffered()
    poller.poll()

    # then the poller counts it as waiting, so a quiet stream does not slow the window's close
    assert poller.buffered()
