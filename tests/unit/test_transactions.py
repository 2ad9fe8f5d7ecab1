"""TransactWriteItems outcomes DynamoDB Local never produces on demand: conflicts with concurrent
transactions. botocore's Stubber answers the calls (no network), as DynamoDB would."""

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from local.harness.builders import NOW, euros, order, placement
from shopfeed.commerce import items
from shopfeed.commerce.inventory.stock import new_layout
from shopfeed.commerce.items import stock_layout_item
from shopfeed.commerce.orders.repository import PLACE_ATTEMPTS, CommerceRepository
from shopfeed.platform import dynamo
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.dynamo import serialize, transactions
from shopfeed.platform.errors import Contention, DependencyUnavailable

ITEMS: dict[str, Any] = {
    label: {"ConditionCheck": {"TableName": "T", "Key": {"PK": {"S": label}}, "ConditionExpression": "x"}}
    for label in ("first", "second")
}


@pytest.fixture
def client() -> Any:
    return boto3.client("dynamodb", region_name="us-east-1")


@pytest.fixture
def stubbed(client: Any) -> Iterator[Stubber]:
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transactions.time, "sleep", lambda _: None)


def cancelled(stubber: Stubber, *codes: str, item: dict[str, Any] | None = None) -> None:
    reasons: list[dict[str, Any]] = [{"Code": code} for code in codes]
    if item is not None:
        reasons[0]["Item"] = item
    stubber.add_client_error(
        "transact_write_items",
        service_error_code="TransactionCanceledException",
        service_message="Transaction cancelled",
        modeled_fields={"CancellationReasons": reasons},
    )


def test_a_transaction_that_conflicts_is_retried_until_it_commits(client: Any, stubbed: Stubber) -> None:
    # given two conflicts with concurrent transactions, then a commit
    cancelled(stubbed, "TransactionConflict")
    cancelled(stubbed, "None", "TransactionConflict")
    stubbed.add_response("transact_write_items", {})

    # when / then: no error, three calls (the stubber fails on a missing or extra call)
    dynamo.transact_write(client, ITEMS)


def test_a_transaction_that_keeps_conflicting_gives_up_after_its_attempts(client: Any, stubbed: Stubber) -> None:
    # given
    for _ in range(3):
        cancelled(stubbed, "TransactionConflict")

    # when / then
    with pytest.raises(dynamo.TransactionContended):
        dynamo.transact_write(client, ITEMS, attempts=3)


def test_a_failed_condition_is_decisive_and_not_retried(client: Any, stubbed: Stubber) -> None:
    # given a failed condition next to a conflict: retrying cannot change the condition's answer
    cancelled(stubbed, "ConditionalCheckFailed", "TransactionConflict", item={"available": {"N": "3"}})

    # when
    with pytest.raises(dynamo.TransactionCancelled) as raised:
        dynamo.transact_write(client, ITEMS)

    # then the reasons come back decoded, the item as plain values, by label
    assert {label: (r.code, r.item) for label, r in raised.value.reasons.items()} == {
        "first": ("ConditionalCheckFailed", {"available": 3}),
        "second": ("TransactionConflict", None),
    }
    assert raised.value.failed("first")
    assert not raised.value.failed("second")


def test_placing_an_order_that_keeps_conflicting_is_a_contention_error(client: Any, stubbed: Stubber) -> None:
    # given a product whose one stock bucket is held by a concurrent transaction at every attempt (a
    # hot product under a flash sale): its layout is read, the first try conflicts, its layout and every
    # bucket are read strongly, and every later try conflicts too
    placed = order([("P-RED-TSHIRT", 1, euros(1999))])
    layout = new_layout("P-RED-TSHIRT", euros(1999))
    bucket = items.stock_bucket_item(layout, layout.buckets[0], 5)
    stubbed.add_response("batch_get_item", {"Responses": {"CommerceTable": [serialize(stock_layout_item(layout))]}})
    cancelled(stubbed, *(["TransactionConflict"] * 6))
    stubbed.add_response("batch_get_item", {"Responses": {"CommerceTable": [serialize(stock_layout_item(layout))]}})
    stubbed.add_response("batch_get_item", {"Responses": {"CommerceTable": [serialize(bucket)]}})
    for _ in range(PLACE_ATTEMPTS - 1):
        cancelled(stubbed, *(["TransactionConflict"] * 6))
    repository = CommerceRepository(dynamo.Table(client, "CommerceTable"), CursorCodec(b"k"))

    # when / then: 409 contention, which tells the client a retry may succeed
    with pytest.raises(Contention):
        repository.place_order(*placement(placed), NOW)


def test_a_single_item_write_that_meets_a_transaction_is_retried_until_it_lands(client: Any, stubbed: Stubber) -> None:
    # given a put that twice meets an item a transaction holds (the SDK does not retry that), then lands
    for _ in range(2):
        stubbed.add_client_error("put_item", service_error_code="TransactionConflictException", http_status_code=400)
    stubbed.add_response("put_item", {})

    # when / then: no error, three calls
    assert dynamo.Table(client, "T").put_if_absent({"PK": "a"})


def test_a_single_item_write_that_keeps_meeting_transactions_gives_up_with_the_conflict(
    client: Any, stubbed: Stubber
) -> None:
    for _ in range(3):
        stubbed.add_client_error("put_item", service_error_code="TransactionConflictException", http_status_code=400)

    with pytest.raises(ClientError, match="TransactionConflictException"):
        transactions.retry_conflicts(lambda: client.put_item(TableName="T", Item={"PK": {"S": "a"}}), attempts=3)


def test_any_other_error_of_a_single_item_write_is_not_retried(client: Any, stubbed: Stubber) -> None:
    stubbed.add_client_error("put_item", service_error_code="ValidationException", http_status_code=400)

    with pytest.raises(ClientError, match="ValidationException"):
        transactions.retry_conflicts(lambda: client.put_item(TableName="T", Item={"PK": {"S": "a"}}))


def test_a_throttled_item_is_retried_like_a_conflict(client: Any, stubbed: Stubber) -> None:
    # given a cancellation naming a throttled item (the table or an index short of capacity), then a commit
    cancelled(stubbed, "None", "ThrottlingError")
    cancelled(stubbed, "ProvisionedThroughputExceeded", "TransactionConflict")
    stubbed.add_response("transact_write_items", {})

    # when / then: no error, three calls
    dynamo.transact_write(client, ITEMS)


def test_a_transaction_throttled_to_the_end_is_an_outage_not_a_bug_or_contention(client: Any, stubbed: Stubber) -> None:
    # given every attempt throttled
    for _ in range(3):
        cancelled(stubbed, "ThrottlingError", "None")

    # when / then: 503 with Retry-After at the HTTP edge, a failed record in a consumer
    with pytest.raises(DependencyUnavailable) as raised:
        dynamo.transact_write(client, ITEMS, attempts=3)
    assert raised.value.retry_after == 2


def test_a_failed_condition_beside_a_throttle_is_decisive(client: Any, stubbed: Stubber) -> None:
    cancelled(stubbed, "ConditionalCheckFailed", "ThrottlingError")
    with pytest.raises(dynamo.TransactionCancelled):
        dynamo.transact_write(client, ITEMS)
