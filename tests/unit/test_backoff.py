"""Failed SQS messages backed off by their receive count (platform.queues): the arithmetic, and the
partial batch response that holds each failed message back for its delay."""

from collections.abc import Mapping

import pytest
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from shopfeed.platform.queues import Backoff, retry_later

BACKOFF = Backoff(base=10, cap=600)


class HeldBack:
    """A queue that records the visibility asked for each message, and refuses those it is told to."""

    def __init__(self, refuse: frozenset[str] = frozenset()) -> None:
        self.delays: dict[str, int] = {}
        self._refuse = refuse

    def retry_after(self, delays: Mapping[str, int]) -> dict[str, str]:
        self.delays |= {receipt: delay for receipt, delay in delays.items() if receipt not in self._refuse}
        return {receipt: "ReceiptHandleIsInvalid: gone" for receipt in delays if receipt in self._refuse}


def record(message_id: str, receive_count: int) -> SQSRecord:
    return SQSRecord(
        {
            "messageId": message_id,
            "receiptHandle": f"receipt-{message_id}",
            "body": "{}",
            "attributes": {"ApproximateReceiveCount": str(receive_count)},
        }
    )


def test_the_wait_doubles_from_the_base_with_each_receive_up_to_the_cap() -> None:
    # when
    delays = [BACKOFF.delay(receive_count) for receive_count in range(1, 10)]
    # then
    assert delays == [10, 20, 40, 80, 160, 320, 600, 600, 600]


@pytest.mark.parametrize(("receive_count", "delay"), [(0, 10), (-3, 10), (1_000, 600), (10**9, 600)])
def test_a_receive_count_out_of_the_usual_range_still_gets_a_bounded_wait(receive_count: int, delay: int) -> None:
    assert BACKOFF.delay(receive_count) == delay


def test_a_message_outlasts_the_sum_of_its_waits() -> None:
    # then: 10 + 20 + ... + 320 = 630 s for the first six, 600 s for each after
    assert BACKOFF.outlasts(6) == 630
    assert BACKOFF.outlasts(150) == 630 + 144 * 600


def test_each_failed_message_is_held_back_by_its_own_receive_count_and_reported() -> None:
    # given three messages received once, once and four times; the first succeeded
    records = [record("ok", 1), record("new", 1), record("old", 4)]
    queue = HeldBack()
    # when
    response = retry_later(records, {"new": ValueError("x"), "old": ValueError("y")}, queue, BACKOFF)
    # then
    assert response == {"batchItemFailures": [{"itemIdentifier": "new"}, {"itemIdentifier": "old"}]}
    assert queue.delays == {"receipt-new": 10, "receipt-old": 80}


def test_a_message_sqs_would_not_hold_back_is_still_reported_failed() -> None:
    # given a visibility change SQS refuses (the message comes back after the queue's own timeout)
    queue = HeldBack(refuse=frozenset({"receipt-gone"}))
    # when
    response = retry_later([record("gone", 2)], {"gone": ValueError("x")}, queue, BACKOFF)
    # then
    assert response == {"batchItemFailures": [{"itemIdentifier": "gone"}]}
    assert queue.delays == {}


def test_a_batch_without_failures_asks_nothing_of_the_queue() -> None:
    # given
    queue = HeldBack()
    # when
    response = retry_later([record("ok", 1)], {}, queue, BACKOFF)
    # then
    assert (response, queue.delays) == ({"batchItemFailures": []}, {})
