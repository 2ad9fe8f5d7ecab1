"""The platform's task queue against moto's SQS: tasks as JSON messages, ten per SendMessageBatch, refused
entries answered by position, and the enqueue helper failing only the records whose task was refused."""

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from moto import mock_aws
from pydantic import BaseModel

from shopfeed.platform import clients, queues
from shopfeed.platform.queues import SqsTaskQueue, TaskNotQueued
from shopfeed.platform.streams import ChangeKind, ItemChange
from tests.support.calls import sqs_calls
from tests.support.faults import refused_sends
from tests.support.queue_time import QueueTime, queue_time

__all__ = ["queue_time"]

AT = datetime(2026, 11, 22, 10, tzinfo=UTC)


class Chore(BaseModel):
    name: str


@pytest.fixture
def queue_url() -> Iterator[str]:
    with mock_aws():
        yield clients.sqs().create_queue(QueueName="ChoreQueue")["QueueUrl"]


def received(queue_url: str) -> list[Chore]:
    bodies: list[Chore] = []
    while messages := clients.sqs().receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages"):
        bodies += [Chore.model_validate_json(message["Body"]) for message in messages]
        entries = [{"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]} for m in messages]
        clients.sqs().delete_message_batch(QueueUrl=queue_url, Entries=entries)
    return bodies


def chore_change(sequence_number: str, name: str | None, kind: ChangeKind = ChangeKind.INSERT) -> ItemChange:
    image = {"PK": f"CHORE#{sequence_number}", "SK": "CHORE", **({"name": name} if name is not None else {})}
    return ItemChange(sequence_number, kind, {"PK": image["PK"], "SK": "CHORE"}, image, None, AT)


def chore_of(change: ItemChange) -> Chore | None:
    if change.kind is not ChangeKind.INSERT:
        return None
    return Chore(name=(change.image or {})["name"])


def test_twenty_five_tasks_go_out_as_json_in_three_batches(queue_url: str) -> None:
    # given
    chores = [Chore(name=f"chore-{n:02d}") for n in range(25)]
    # when
    with sqs_calls() as calls:
        refused = SqsTaskQueue[Chore](clients.sqs(), queue_url).send(chores)
    # then
    assert refused == {}
    assert calls.counts()["SendMessageBatch"] == 3
    assert sorted(received(queue_url), key=lambda c: c.name) == chores


def test_refused_entries_are_answered_by_their_position_in_the_whole_send(queue_url: str) -> None:
    # given SQS refusing two entries, one in the first batch of ten and one in the second
    chores = [Chore(name=f"chore-{n:02d}") for n in range(15)]
    refuse = {'{"name":"chore-03"}', '{"name":"chore-12"}'}
    # when
    with refused_sends(lambda body: body in refuse):
        refused = SqsTaskQueue[Chore](clients.sqs(), queue_url).send(chores)
    # then
    assert sorted(refused) == [3, 12]
    assert all(reason.startswith("InternalError") for reason in refused.values())
    assert len(received(queue_url)) == 13


def test_enqueue_fails_only_the_unreadable_and_the_refused_records(queue_url: str) -> None:
    # given a readable chore, one SQS refuses, an unreadable one and a change that makes no task
    changes = [
        chore_change("1", "sweep"),
        chore_change("2", "mop"),
        chore_change("3", None),
        chore_change("4", "dust", ChangeKind.MODIFY),
    ]
    queue = SqsTaskQueue[Chore](clients.sqs(), queue_url)
    # when
    with refused_sends(lambda body: "mop" in body):
        failures = queues.enqueue(changes, chore_of, queue, metric="ChoreQueued", unqueued="chore not queued")
    # then
    assert sorted(failures) == ["2", "3"]
    assert isinstance(failures["2"], TaskNotQueued)
    assert isinstance(failures["3"], KeyError)
    assert received(queue_url) == [Chore(name="sweep")]


def test_twelve_received_messages_are_held_back_by_their_own_delays_in_two_calls(
    queue_url: str, queue_time: QueueTime
) -> None:
    # given twelve chores received and failed (moto's queue hands them out again at once by default)
    SqsTaskQueue[Chore](clients.sqs(), queue_url).send([Chore(name=f"chore-{n:02d}") for n in range(12)])
    messages = []
    while page := clients.sqs().receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages"):
        messages += page
    # when the first is held back 10 s, the others 30 s
    delays = {message["ReceiptHandle"]: 10 if n == 0 else 30 for n, message in enumerate(messages)}
    with sqs_calls() as calls:
        refused = SqsTaskQueue[Chore](clients.sqs(), queue_url).retry_after(delays)
    # then none is visible before its delay has passed, and each is after it
    assert (refused, calls.counts()["ChangeMessageVisibilityBatch"]) == ({}, 2)
    queue_time.advance(11)
    assert [chore.name for chore in received(queue_url)] == [Chore.model_validate_json(messages[0]["Body"]).name]
    queue_time.advance(20)
    assert len(received(queue_url)) == 11


def test_a_visibility_sqs_refuses_is_answered_by_its_receipt_handle(queue_url: str) -> None:
    # when
    refused = SqsTaskQueue[Chore](clients.sqs(), queue_url).retry_after({"not-a-receipt": 30})
    # then
    assert list(refused) == ["not-a-receipt"]
    assert refused["not-a-receipt"].startswith("ReceiptHandleIsInvalid")
