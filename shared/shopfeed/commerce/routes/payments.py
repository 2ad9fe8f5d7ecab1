"""Payments over HTTP: start paying an order (202: the provider answers later), an order's attempts
(ECOM-006) and the attempts still pending (ECOM-007, ops)."""

from typing import Annotated, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from shopfeed.commerce import bootstrap
from shopfeed.commerce.errors import OrderNotPayable, PaymentAmountMismatch, PaymentInProgress
from shopfeed.commerce.payments import services as payments
from shopfeed.commerce.schemas import PaymentPage, PaymentView, PayOrder
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, json_response
from shopfeed.platform.idempotency import REPLAYED_HEADER, IdempotentRequest
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.parameters import Cursor, IdempotencyKey
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.types import EntityId

router = Router()
OrderPath = Annotated[EntityId, Path(description="A ULID")]
PaymentStore = Annotated[payments.Payments, Depends(bootstrap.payments)]
PaymentListStore = Annotated[payments.PaymentLists, Depends(bootstrap.payment_lists)]


@router.post(
    "/orders/<order_id>/payments",
    summary="Pay an order (its owner): the attempt is accepted Pending; the provider's answer moves the order",
    status_code=202,
    responses=problem_responses(
        errors.MissingIdempotencyKey,
        errors.IdempotencyKeyReused,
        errors.NotFound,
        errors.Forbidden,
        OrderNotPayable,
        PaymentInProgress,
        PaymentAmountMismatch,
        errors.Contention,
        ok=202,
    ),
    tags=["payments"],
)
def pay_order(
    order_id: OrderPath,
    body: PayOrder,
    caller: CurrentCaller,
    store: PaymentStore,
    idempotency_key: IdempotencyKey = None,
) -> Response[PaymentView]:
    request = IdempotentRequest.of(caller.user_id, idempotency_key, f"pay:{order_id}", body.model_dump(mode="json"))
    created = payments.start_payment(store, caller, request, order_id, body.amount, body.payment_method)
    attempt = created.value
    if not created.replayed:
        logger.info("payment started", order_id=order_id, attempt_id=attempt.attempt_id)
        metrics.add_metric(name="PaymentStarted", unit="Count", value=1)
    # 202 as first answered, a replay marked as such (the same contract as a 201 create's).
    headers = {REPLAYED_HEADER: "true"} if created.replayed else {}
    return json_response(PaymentView.fields_of(attempt), status=202, headers=headers)


@router.get(
    "/orders/<order_id>/payments",
    summary="List an order's payment attempts, newest first (ECOM-006): one strongly consistent Query",
    responses=problem_responses(errors.NotFound, errors.InvalidCursor),
    tags=["payments"],
)
def list_order_payments(
    order_id: OrderPath,
    caller: CurrentCaller,
    store: PaymentStore,
    lists: PaymentListStore,
    limit: Annotated[int, Query(ge=1, le=25)] = 5,
    cursor: Cursor = None,
) -> PaymentPage:
    page = payments.list_order_payments(store, lists, caller, order_id, limit, cursor)
    return PaymentPage(items=[PaymentView.fields_of(attempt) for attempt in page.items], next_cursor=page.next_cursor)


@router.get(
    "/payments",
    summary="List pending payment attempts, oldest first (ECOM-007, ops): one Query per write shard",
    responses=problem_responses(errors.Forbidden, errors.InvalidCursor),
    tags=["payments"],
)
def list_pending_payments(
    status: Annotated[Literal["Pending"], Query(description="Only pending attempts are listed (a sparse index)")],
    caller: CurrentCaller,
    lists: PaymentListStore,
    limit: Annotated[int, Query(ge=1, le=200)] = 200,
    cursor: Cursor = None,
) -> PaymentPage:
    page = payments.list_pending_payments(lists, caller, limit, cursor)
    return PaymentPage(items=[PaymentView.fields_of(attempt) for attempt in page.items], next_cursor=page.next_cursor)
