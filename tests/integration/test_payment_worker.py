"""The payment chain against moto: the commerce stream consumer queues each new attempt on the template's
PaymentQueue, the worker (through the template's SQS mapping) settles it with the sandbox provider, and
the outcome, the order's move and the outbox event are written together."""

import json
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from functions.commerce_api.app import lambda_handler as api
from functions.commerce_stream.app import lambda_handler as consumer
from functions.payment_worker.app import lambda_handler as worker
from local.harness.apigw import sample
from local.harness.builders import euros, order
from local.harness.client import ApiClient, LambdaContext
from local.harness.factories import create_product, line, placed_order
from local.harness.tables import table_items
from shopfeed.commerce import events, items, keys
from shopfeed.commerce.models import OrderStatus
from shopfeed.commerce.payments.provider import Approved, Declined, ProviderUnavailable
from shopfeed.commerce.payments.sandbox import SandboxProvider
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import derived_id
from tests.integration.outbox_support import STREAM_FUNCTION, Subscriber, batch
from tests.support.calls import dynamodb_calls
from tests.support.payments import PaymentChain, PaymentLine, consumer_filters, outage, sandbox_calls, task_body
from tests.support.queue_time import QueueTime, queue_time

__all__ = ["queue_time"]

pytestmark = pytest.mark.usefixtures("shop")

WORKER = LambdaContext(
    function_name="PaymentWorkerFunction",
    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:PaymentWorkerFunction",
)
DECLINED_PRICE = 200_100  # the sandbox declines 200000-299999 with code amount // 100
UNAVAILABLE_PRICE = 300_050  # the sandbox does not answer for 300000-300099


def pay(client: ApiClient, order: dict[str, Any], key: str = "pay-1") -> dict[str, Any]:
    body = {"amount": order["total"], "payment_method": "tok_sandbox_visa"}
    answer = client.post(f"/orders/{order['order_id']}/payments", body, headers={"Idempotency-Key": key})
    assert answer.status == 202, answer.text
    return dict(answer.json)


def item(key: dict[str, str]) -> dict[str, Any]:
    response = clients.dynamodb().get_item(TableName="CommerceTable", Key=dynamo.serialize(key), ConsistentRead=True)
    return dynamo.deserialize(response["Item"]) if "Item" in response else {}


def outbox(event_type: str) -> list[dict[str, Any]]:
    return [i for i in table_items() if i["entity_type"] == items.OUTBOX_EVENT and i["event_type"] == event_type]


def sqs_event(*bodies: str) -> dict[str, Any]:
    """Messages as the SQS mapping hands them to the worker."""
    return {
        "Records": [
            {
                "messageId": f"m-{n}",
                "receiptHandle": f"r-{n}",
                "body": body,
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:PaymentQueue",
                "awsRegion": "us-east-1",
            }
            for n, body in enumerate(bodies)
        ]
    }


def failed_messages(response: dict[str, Any]) -> list[str]:
    return [failure["itemIdentifier"] for failure in response["batchItemFailures"]]


def priced_order(client: ApiClient, admin: ApiClient, price: int) -> dict[str, Any]:
    """An order of one product at ``price`` (the sandbox's outcome depends on the amount)."""
    create_product(admin, f"P-PRICE-{price}", price=price, available=10)
    return placed_order(client, line(f"P-PRICE-{price}", price=price))


# -- the stream consumer queues attempts ------------------------------------------------------------


def test_a_new_attempt_becomes_exactly_one_message_naming_it(
    commerce_api: ApiClient, payment_chain: PaymentChain
) -> None:
    # given a payment started
    order = placed_order(commerce_api, line())
    attempt = pay(commerce_api, order)
    # when the consumer is handed what its filter lets in of the stream
    wanted = consumer_filters()
    records = [record for record in payment_chain.stream.read() if wanted(record)]
    response = consumer(batch(records), STREAM_FUNCTION)
    # then one message names the attempt (never its token); the key record and the order's guard never got in
    assert response == {"batchItemFailures": []}
    (message,) = payment_chain.line.waiting()
    assert json.loads(message) == {"order_id": order["order_id"], "attempt_id": attempt["attempt_id"]}
    entity_types = [r["dynamodb"]["NewImage"]["entity_type"]["S"] for r in records]
    assert entity_types.count(items.PAYMENT_ATTEMPT) == 1
    assert set(entity_types) == {items.PRODUCT, items.OUTBOX_EVENT, items.PAYMENT_ATTEMPT}


class SqsRefusals:
    """SendMessageBatch answering every entry as failed (HTTP 200, each in ``Failed``), as SQS does for
    an internal error per entry: a botocore hook on the shared client."""

    def __enter__(self) -> "SqsRefusals":
        clients.sqs().meta.events.register("before-call.sqs.SendMessageBatch", self._refuse)
        return self

    def __exit__(self, *_: object) -> None:
        clients.sqs().meta.events.unregister("before-call.sqs.SendMessageBatch", self._refuse)

    @staticmethod
    def _refuse(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        failed = [
            {"Id": entry["Id"], "SenderFault": False, "Code": "InternalError", "Message": "Try again."}
            for entry in json.loads(params["body"])["Entries"]  # the request as sent (SQS's JSON protocol)
        ]
        parsed = {"Successful": [], "Failed": failed, "ResponseMetadata": {"HTTPStatusCode": 200}}
        return AWSResponse("https://sqs.us-east-1.amazonaws.com/", 200, {}, None), parsed


def test_an_attempt_the_queue_refuses_fails_its_record_alone(
    commerce_api: ApiClient, payment_chain: PaymentChain
) -> None:
    # given an attempt's records (the order's OrderPlaced event among them)
    order = placed_order(commerce_api, line())
    pay(commerce_api, order)
    wanted = consumer_filters()
    records = [record for record in payment_chain.stream.read() if wanted(record)]
    # when the queue refuses the attempt's message
    with SqsRefusals():
        response = consumer(batch(records), STREAM_FUNCTION)
    # then that record alone fails (Lambda delivers it again); the event was relayed
    attempt_record = [r for r in records if r["dynamodb"]["NewImage"]["entity_type"]["S"] == items.PAYMENT_ATTEMPT]
    assert failed_messages(response) == [attempt_record[0]["dynamodb"]["SequenceNumber"]]
    assert payment_chain.line.waiting() == []
    assert all("published_at" in event for event in outbox(events.ORDER_PLACED))
    # and delivered again, it is queued
    assert consumer(batch(attempt_record), STREAM_FUNCTION) == {"batchItemFailures": []}
    assert len(payment_chain.line.waiting()) == 1


# -- the worker settles them ----------------------------------------------------------------------


def test_an_approved_payment_pays_the_order_in_one_transaction_with_its_event_and_proofs_of_purchase(
    commerce_api: ApiClient, admin: ApiClient, payment_chain: PaymentChain, subscriber: Subscriber
) -> None:
    # given an order of two products, and its payment started
    create_product(admin, "P-BLK-CAP", price=1499, available=10)
    order = placed_order(commerce_api, line(quantity=2), line("P-BLK-CAP", price=1499))
    attempt = pay(commerce_api, order)
    # when the chain runs (stream → queue → worker → stream → bus)
    payment_chain.run()
    # then the order is Paid: a new version, out of the Placed status index, no payment in flight
    stored = item(keys.order(order["order_id"]))
    assert (stored["status"], stored["version"]) == ("Paid", 2)
    assert (
        stored["by_status_pk"]
        == keys.order_by_status(OrderStatus.PAID, order["placed_at"], order["order_id"])["by_status_pk"]
    )
    assert items.PAYMENT_PENDING not in stored
    # and the attempt is Authorized with the provider's reference, out of the pending index, its token gone
    settled = item(keys.payment_attempt(order["order_id"], attempt["attempt_id"]))
    assert settled["status"] == "Authorized"
    assert settled["provider_reference"].startswith("sbx_")
    assert not {"pending_pk", "pending_sk", "payment_method"} & settled.keys()
    # and the proof of purchase of each product counts one paid order
    for product_id in ("P-RED-TSHIRT", "P-BLK-CAP"):
        proof = item(keys.purchase("U100", product_id))
        assert (proof["entity_type"], proof[items.PAID_ORDERS], proof["product_id"]) == (items.PURCHASE, 1, product_id)
    # and PaymentAuthorized, its id derived from the attempt, reached the subscriber
    (event,) = outbox(events.PAYMENT_AUTHORIZED)
    assert event["event_id"] == derived_id(attempt["created_at"], f"PaymentAuthorized|{attempt['attempt_id']}")
    delivered = [e for e in subscriber.receive() if e["detail-type"] == events.PAYMENT_AUTHORIZED]
    assert [e["detail"]["data"] for e in delivered] == [
        {
            "order_id": order["order_id"],
            "attempt_id": attempt["attempt_id"],
            "user_id": "U100",
            "amount": order["total"],
            "provider_reference": settled["provider_reference"],
            "authorized_at": settled["updated_at"],
            "order_status": "Paid",
        }
    ]
    # and the API shows it
    assert commerce_api.get(f"/orders/{order['order_id']}").json["status"] == "Paid"
    listed = commerce_api.get(f"/orders/{order['order_id']}/payments").json["items"]
    assert [(a["attempt_id"], a["status"]) for a in listed] == [(attempt["attempt_id"], "Authorized")]


def test_settling_one_message_takes_four_round_trips(commerce_api: ApiClient, payment_chain: PaymentChain) -> None:
    # given
    order = placed_order(commerce_api, line())
    attempt = pay(commerce_api, order)
    # when
    with dynamodb_calls() as calls:
        response = worker(sqs_event(task_body(order["order_id"], attempt["attempt_id"])), WORKER)
    # then the attempt (strong), the order with its lines, the provider (the sandbox's ledger), one transaction
    assert response == {"batchItemFailures": []}
    assert calls.operations == ["GetItem", "Query", "UpdateItem", "TransactWriteItems"]


def test_a_declined_payment_leaves_the_order_placed_and_payable_again(
    commerce_api: ApiClient, admin: ApiClient, payment_chain: PaymentChain, subscriber: Subscriber
) -> None:
    # given
    order = priced_order(commerce_api, admin, DECLINED_PRICE)
    attempt = pay(commerce_api, order)
    # when
    payment_chain.run()
    # then the attempt is Declined with the processor's code; the order is untouched but for the guard
    settled = item(keys.payment_attempt(order["order_id"], attempt["attempt_id"]))
    assert (settled["status"], settled["decline_code"]) == ("Declined", "2001")
    stored = item(keys.order(order["order_id"]))
    assert (stored["status"], stored["version"]) == ("Placed", 1)
    assert items.PAYMENT_PENDING not in stored
    assert item(keys.purchase("U100", f"P-PRICE-{DECLINED_PRICE}")) == {}
    # and PaymentDeclined reached the subscriber
    (declined,) = [e for e in subscriber.receive() if e["detail-type"] == events.PAYMENT_DECLINED]
    assert declined["detail"]["data"]["decline_code"] == "2001"
    # and the customer may try again with a new key
    assert pay(commerce_api, order, key="second-try")["status"] == "Pending"


def test_an_unavailable_provider_is_retried_with_backoff_then_parked_with_the_attempt_still_pending(
    commerce_api: ApiClient, admin: ApiClient, ops: ApiClient, payment_chain: PaymentChain, queue_time: QueueTime
) -> None:
    # given
    order = priced_order(commerce_api, admin, UNAVAILABLE_PRICE)
    attempt = pay(commerce_api, order)
    # when the chain runs: each failed receive holds the message back longer, until the queue's
    # redrive policy moves it on
    calls = outage(payment_chain, queue_time, attempt["attempt_id"])
    # then the provider was called once per receive, each after the backoff of the receive before (the
    # sixth receive finds the message past maxReceiveCount and moves it instead)
    assert calls == [1, 2, 3, 4, 5, 5]
    assert sandbox_calls(attempt["attempt_id"]) == 5
    assert payment_chain.line.dead_letters() == [task_body(order["order_id"], attempt["attempt_id"])]
    # and the attempt is still Pending, listed as such, with no event; the order still has it in flight
    assert item(keys.payment_attempt(order["order_id"], attempt["attempt_id"]))["status"] == "Pending"
    pending = ops.get("/payments", query={"status": "Pending"}).json["items"]
    assert [a["attempt_id"] for a in pending] == [attempt["attempt_id"]]
    assert outbox(events.PAYMENT_AUTHORIZED) == outbox(events.PAYMENT_DECLINED) == []
    assert item(keys.order(order["order_id"]))[items.PAYMENT_PENDING] == attempt["attempt_id"]


def test_a_message_delivered_three_times_calls_the_provider_once(
    commerce_api: ApiClient, payment_chain: PaymentChain
) -> None:
    # given an attempt whose message went through the chain once
    order = placed_order(commerce_api, line())
    attempt = pay(commerce_api, order)
    payment_chain.run()
    # when the same message comes twice more (SQS delivers at least once)
    body = task_body(order["order_id"], attempt["attempt_id"])
    payment_chain.line.send([body, body])
    with dynamodb_calls() as calls:
        payment_chain.line.drain()
    # then the worker read the attempt each time and went no further
    assert payment_chain.line.delivered.count(body) == 3
    assert sandbox_calls(attempt["attempt_id"]) == 1
    assert calls.operations == ["GetItem", "GetItem"]
    assert len(outbox(events.PAYMENT_AUTHORIZED)) == 1
    assert item(keys.order(order["order_id"]))["version"] == 2
    assert item(keys.purchase("U100", "P-RED-TSHIRT"))[items.PAID_ORDERS] == 1


def test_the_same_message_three_times_in_one_batch_calls_the_provider_once(
    commerce_api: ApiClient, payment_chain: PaymentChain
) -> None:
    # given
    order = placed_order(commerce_api, line())
    attempt = pay(commerce_api, order)
    body = task_body(order["order_id"], attempt["attempt_id"])
    # when
    response = worker(sqs_event(body, body, body), WORKER)
    # then
    assert response == {"batchItemFailures": []}
    assert sandbox_calls(attempt["attempt_id"]) == 1
    assert len(outbox(events.PAYMENT_AUTHORIZED)) == 1


def test_an_unreadable_or_unknown_message_fails_alone(commerce_api: ApiClient, payment_chain: PaymentChain) -> None:
    # given a batch: an unreadable body, an attempt that does not exist, and a real one
    order = placed_order(commerce_api, line())
    attempt = pay(commerce_api, order)
    event = sqs_event(
        "{not json",
        task_body(order["order_id"], "01J00000000000000000000000"),
        task_body(order["order_id"], attempt["attempt_id"]),
    )
    # when
    response = worker(event, WORKER)
    # then the first two fail (they come back, then wait in the DLQ), the third is settled
    assert failed_messages(response) == ["m-0", "m-1"]
    assert item(keys.payment_attempt(order["order_id"], attempt["attempt_id"]))["status"] == "Authorized"


def test_cancelling_a_paid_order_takes_its_proofs_of_purchase_back(
    commerce_api: ApiClient, admin: ApiClient, payment_chain: PaymentChain
) -> None:
    # given a paid order
    order = placed_order(commerce_api, line(quantity=3))
    pay(commerce_api, order)
    payment_chain.run()
    stock = admin.get("/products/P-RED-TSHIRT").json["available"]
    # when it is cancelled
    cancelled = commerce_api.post(f"/orders/{order['order_id']}/cancel")
    # then it is Cancelled, restocked, and no longer proves the purchase
    assert (cancelled.status, cancelled.json["status"]) == (200, "Cancelled")
    assert admin.get("/products/P-RED-TSHIRT").json["available"] == stock + 3
    assert item(keys.purchase("U100", "P-RED-TSHIRT"))[items.PAID_ORDERS] == 0
    # and a paid order is not payable again
    again = commerce_api.post(
        f"/orders/{order['order_id']}/payments",
        {"amount": order["total"], "payment_method": "tok_sandbox_visa"},
        headers={"Idempotency-Key": "again"},
    )
    assert (again.status, again.json["order_status"]) == (409, "Cancelled")


def test_a_replayed_payment_answers_the_first_attempt_after_it_was_settled(
    commerce_api: ApiClient, payment_chain: PaymentChain
) -> None:
    # given a payment that went through
    order = placed_order(commerce_api, line())
    first = pay(commerce_api, order, key="once")
    payment_chain.run()
    # when the client retries its request
    replay = commerce_api.post(
        f"/orders/{order['order_id']}/payments",
        {"amount": order["total"], "payment_method": "tok_sandbox_visa"},
        headers={"Idempotency-Key": "once"},
    )
    # then it gets its first answer again (202, Pending: what it was told), not a 409
    assert (replay.status, replay.json) == (202, first)
    assert replay.headers["Idempotent-Replayed"] == "true"


# -- the sample events (events/) -----------------------------------------------------------------

SAMPLE_ORDER = "01M81B5H80596QMENX0MEX0VN5"


def sample_order(payment_pending: str | None = None) -> None:
    """The order the samples name: U100's 2 × P-RED-TSHIRT (3,998 EUR), written as placing it writes it."""
    placed = order([("P-RED-TSHIRT", 2, euros(1999))]).model_copy(update={"order_id": SAMPLE_ORDER})
    header = items.order_item(placed) | ({items.PAYMENT_PENDING: payment_pending} if payment_pending else {})
    for written in (header, *(items.order_line_item(placed, each) for each in placed.lines)):
        clients.dynamodb().put_item(TableName="CommerceTable", Item=dynamo.serialize(written))


def test_the_pay_order_sample_starts_a_payment(aws: None) -> None:
    # given the order the sample pays
    sample_order()
    # when
    answer = api(sample("api/pay_order.json"), LambdaContext())
    # then
    assert answer["statusCode"] == 202, answer["body"]
    assert json.loads(answer["body"])["status"] == "Pending"


def test_the_sample_attempt_record_and_message_take_the_order_to_paid(payment_line: PaymentLine) -> None:
    # given the items of the sample stream record: the attempt, in flight on its order
    record = sample("streams/commerce_payment_attempt_inserted.json")
    attempt = dynamo.deserialize(record["Records"][0]["dynamodb"]["NewImage"])
    sample_order(payment_pending=attempt["attempt_id"])
    clients.dynamodb().put_item(TableName="CommerceTable", Item=record["Records"][0]["dynamodb"]["NewImage"])
    message = sample("sqs/payment_task.json")
    # when the consumer gets the sample record, and the worker the sample message
    consumed = consumer(record, STREAM_FUNCTION)
    queued = payment_line.waiting()
    settled = worker(message, WORKER)
    # then the consumer queued exactly the sample message's body, and the worker paid the order
    assert consumed == settled == {"batchItemFailures": []}
    assert queued == [message["Records"][0]["body"]]
    assert item(keys.order(SAMPLE_ORDER))["status"] == "Paid"


# -- the sandbox provider's ledger -------------------------------------------------------------------


def test_the_sandbox_answers_a_repeated_key_with_its_first_answer_and_counts_every_call(aws: None) -> None:
    # given
    sandbox = SandboxProvider(dynamo.Table(clients.dynamodb(), "CommerceTable"))
    # when
    first = sandbox.authorize("A-1", euros(1999), "tok_sandbox_visa")
    again = sandbox.authorize("A-1", euros(1999), "tok_sandbox_visa")
    declined = sandbox.authorize("A-2", euros(DECLINED_PRICE), "tok_sandbox_visa")
    with pytest.raises(ProviderUnavailable):
        sandbox.authorize("A-3", euros(UNAVAILABLE_PRICE), "tok_sandbox_visa")
    # then
    assert first == again == Approved(reference=first.reference)
    assert declined == Declined(reference=declined.reference, code="2001")
    assert [sandbox_calls(key) for key in ("A-1", "A-2", "A-3")] == [2, 1, 1]
    ledger = item(keys.sandbox_charge("A-1"))
    assert (ledger["entity_type"], ledger["outcome"]) == (items.SANDBOX_CHARGE, "approved")
    assert "tok_sandbox_visa" not in json.dumps(ledger)  # no payment method is kept
