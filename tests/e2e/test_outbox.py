"""A poison outbox record, end to end: the relay fails it, the poller retries it as the template says,
then parks it in the stream's dead-letter queue, and the rest of the stream keeps flowing."""

import uuid
from typing import Any

import pytest

from local import cfn
from shopfeed.commerce import items, keys
from shopfeed.platform import dynamo
from tests.e2e.conftest import Client, EventInbox, LocalStack
from tests.e2e.test_orders import events_of, order_body, place

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


def relay_retries() -> int:
    mapping = cfn.load()["Resources"]["CommerceStreamFunction"]["Properties"]["Events"]["CommerceStream"]
    return int(mapping["Properties"]["MaximumRetryAttempts"])


def test_a_poison_outbox_record_goes_to_the_dlq_while_the_rest_is_published(
    local_stack: LocalStack,
    customer: Client,
    product: dict[str, Any],
    inbox: EventInbox,
    dead_letters: EventInbox,
) -> None:
    # given an order, and right behind it in the stream an outbox item no relay can read
    first = place(customer, order_body(product, 1)).json()
    poison_id = f"POISON-{uuid.uuid4().hex}"
    poison = keys.outbox(poison_id) | {"entity_type": items.OUTBOX_EVENT}
    local_stack.dynamodb().put_item(TableName="CommerceTable", Item=dynamo.serialize(poison))

    # when the relay works through the stream, then the order's event is published
    assert events_of(inbox, "OrderPlaced", first["order_id"])

    # and the poison record reaches the dead-letter queue after its retries, as a pointer into the stream
    (record,) = dead_letters.wait_for(lambda r: r["DDBStreamBatchInfo"]["batchSize"] == 1, timeout_s=60)
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == 1 + relay_retries()
    assert record["requestContext"]["functionArn"].endswith(":function:CommerceStreamFunction")
    assert record["DDBStreamBatchInfo"]["streamArn"] == local_stack.page()["resources"]["CommerceTable"]["StreamArn"]

    # and the shard moved on: a later order is published too
    second = place(customer, order_body(product, 1)).json()
    assert events_of(inbox, "OrderPlaced", second["order_id"])
