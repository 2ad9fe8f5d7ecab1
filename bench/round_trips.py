"""DynamoDB round trips and consumed capacity per endpoint of each API (and per payment worker message),
against DynamoDB Local.

Each request runs through the real handler on data seeded first (outside the measurement), so a
row shows what one request of that kind costs. DynamoDB Local computes capacity from item sizes
the way DynamoDB does (1 RCU per 4 KB strongly consistent read, half that eventually consistent;
1 WCU per 1 KB written, twice that inside a transaction; index writes included), except for
transactions: see bench.meter.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from bench.markdown import table, units
from bench.meter import Meter, Metered
from bench.stack import Stack
from local.cfn import http_routes
from local.harness.client import Answer, LambdaContext
from local.harness.factories import (
    create_product,
    idempotency_key,
    if_match,
    line,
    place_order,
    placed_order,
    product_body,
    record_purchase,
    register_user,
    review_body,
    reviewed,
    seed_order,
    user_body,
)
from shopfeed.commerce import bootstrap
from shopfeed.commerce.payments.services import PaymentTask, RefundTask
from shopfeed.platform.clock import utc_now

FUNCTION = "CommerceApiFunction"
CATEGORY = "bench-tshirts"
PRODUCTS_IN_CATEGORY = 20
ORDERS_OF_USER = 30
REVIEWS_OF_PRODUCT = 30
OVERDUE_ORDERS = 10


@dataclass(frozen=True)
class Measurement:
    route: str  # as the template spells it: "GET /orders/{order_id}"
    case: str
    pattern: str
    expected: int
    status: int
    metered: Metered

    @property
    def round_trips(self) -> int:
        return len(self.metered.calls)


@dataclass
class RoundTrips:
    measurements: list[Measurement]
    unmeasured: list[str]
    data: str  # what the requests ran against

    def unexpected(self) -> list[Measurement]:
        return [m for m in self.measurements if m.status != m.expected]

    def markdown(self) -> str:
        rows = [
            [
                f"`{m.route}`",
                m.case,
                m.pattern,
                str(m.status) if m.status == m.expected else f"**{m.status}** (expected {m.expected})",
                m.round_trips,
                " + ".join(m.metered.operations) or "–",
                units(m.metered.units(reads=True)),
                units(m.metered.units(reads=False)) + (" *" if m.metered.estimated else ""),
                units(m.metered.index_units()),
            ]
            for m in self.measurements
        ]
        parts = [
            table(
                ["route", "case", "pattern", "status", "round trips", "calls", "RCU", "WCU", "of which indexes"],
                rows,
                "llllrlrrr",
            ),
            "",
            "RCU and WCU include the indexes' share. \\* table share of a TransactWriteItems computed from "
            "the items it wrote (2 WCU per item per started KB), because DynamoDB Local reports 2 for any "
            "transaction; its index share is DynamoDB Local's. – : DynamoDB reports no capacity for a "
            "refused write (a cancelled transaction or a failed condition), though it bills the attempt.",
            f"Data: {self.data}",
        ]
        if self.unmeasured:
            parts += ["", "Template routes of the function with no row yet: " + ", ".join(self.unmeasured)]
        return "\n".join(parts)


class Recorder:
    """Meters requests one at a time and keeps a row per request."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.measurements: list[Measurement] = []

    def __call__(
        self, route: str, case: str, request: Callable[[], Answer], *, expected: int = 200, pattern: str = "–"
    ) -> Answer:
        with self.meter.measuring() as metered:
            answer = request()
        self.measurements.append(Measurement(route, case, pattern, expected, answer.status, metered))
        return answer

    def results(self, function: str, data: str) -> RoundTrips:
        """The rows, and the template routes of ``function`` that have none."""
        measured = {m.route for m in self.measurements}
        unmeasured = [
            f"`{method} {path}`"
            for method, path, served_by in http_routes()
            if served_by == function and f"{method} {path}" not in measured
        ]
        return RoundTrips(self.measurements, unmeasured, data)


def settle(attempt: dict[str, Any]) -> Answer:
    """The payment worker handed the attempt's message (or its refund's, when the attempt shows one),
    as its SQS mapping does; its answer as JSON."""
    from functions.payment_worker.app import lambda_handler

    task = PaymentTask(order_id=attempt["order_id"], attempt_id=attempt["attempt_id"])
    if attempt.get("refund"):
        task = RefundTask(**task.model_dump(), refund_id=attempt["refund"]["refund_id"])
    body = task.model_dump_json()
    event = {"Records": [{"messageId": "bench", "receiptHandle": "bench", "body": body, "attributes": {}}]}
    result = lambda_handler(event, LambdaContext(function_name="PaymentWorkerFunction"))
    return Answer(200, {}, json.dumps(result))


def sweep() -> Answer:
    """One tick of the payment-window sweep; its report as JSON."""
    from functions.order_expiry.app import lambda_handler

    result = lambda_handler({}, LambdaContext(function_name="OrderExpiryFunction"))
    return Answer(200, {}, json.dumps(result))


def measure(stack: Stack) -> RoundTrips:
    api = stack.api
    admin = api.as_user("U-BENCH-ADMIN", "admin")
    ops = api.as_user("U-BENCH-OPS", "ops")
    buyer = api.as_user("U-BENCH-BUYER")
    newcomer = api.as_user("U-BENCH-NEW")

    # Seeded outside the measurements.
    products = [f"P-BENCH-{n:02d}" for n in range(1, PRODUCTS_IN_CATEGORY + 1)]
    for product_id in products:
        create_product(admin, product_id, category=CATEGORY, available=100_000)
    create_product(admin, "P-BENCH-SCARCE", available=1)
    register_user(buyer)
    for _ in range(ORDERS_OF_USER):
        placed_order(buyer, line(products[0]))
    five_lines = [line(product_id, quantity=2) for product_id in products[:5]]
    replayed = line(products[4])
    place_order(buyer, replayed, key="bench-replay")
    reviewed_product = products[2]
    for n in range(REVIEWS_OF_PRODUCT):
        reviewed(api.as_user(f"U-BENCH-REVIEWER-{n:02d}"), reviewed_product, rating=1 + n % 5, table=stack.table)
    for product_id in products[3:8]:
        reviewed(buyer, product_id, table=stack.table)
    record_purchase(buyer.sub or "", reviewed_product, table=stack.table)

    with Meter() as meter:
        measure_one = Recorder(meter)
        measure_one(
            "POST /users", "register: profile + email guard", lambda: newcomer.post("/users", user_body()), expected=201
        )
        measure_one("GET /users/{user_id}", "myself", lambda: buyer.get("/users/me"), pattern="ECOM-001")
        etag = if_match(buyer.get("/users/me").headers["ETag"])
        measure_one(
            "PATCH /users/me", "If-Match current", lambda: buyer.patch("/users/me", {"name": "B"}, headers=etag)
        )
        measure_one(
            "PATCH /users/me",
            "If-Match stale",
            lambda: buyer.patch("/users/me", {"name": "C"}, headers=etag),
            expected=412,
        )

        new_product = product_body("P-BENCH-NEW", category=CATEGORY)
        measure_one("POST /products", "create", lambda: admin.post("/products", new_product), expected=201)
        product = f"/products/{products[1]}"
        measure_one("GET /products/{product_id}", "one product", lambda: api.get(product))
        etag = if_match(api.get(product).headers["ETag"])
        measure_one(
            "PATCH /products/{product_id}", "rename", lambda: admin.patch(product, {"name": "Renamed"}, headers=etag)
        )
        measure_one("GET /products", "category page", lambda: api.get("/products", query={"category": CATEGORY}))
        measure_one(
            "POST /products/{product_id}/stock",
            "restock",
            lambda: admin.post(f"{product}/stock", {"quantity": 5}, headers=idempotency_key()),
            expected=201,
        )

        order = "POST /orders"
        measure_one(order, "1 line", lambda: place_order(buyer, line(products[3])), expected=201, pattern="ECOM-009")
        placed = measure_one(
            order, "5 lines", lambda: place_order(buyer, *five_lines), expected=201, pattern="ECOM-009"
        )
        measure_one(
            order,
            "replay of a placed order",
            lambda: place_order(buyer, replayed, key="bench-replay"),
            expected=201,
            pattern="ECOM-009",
        )
        measure_one(
            order,
            "short of stock",
            lambda: place_order(buyer, line("P-BENCH-SCARCE", quantity=2)),
            expected=409,
            pattern="ECOM-009",
        )

        path = placed.headers["Location"]
        measure_one("GET /orders/{order_id}", "5 lines", lambda: buyer.get(path), pattern="ECOM-003")
        measure_one("GET /orders/{order_id}/lines", "5 lines", lambda: buyer.get(f"{path}/lines"), pattern="ECOM-004")
        measure_one("GET /users/me/orders", "first page", lambda: buyer.get("/users/me/orders"), pattern="ECOM-002")
        measure_one(
            "GET /orders",
            "status Placed, this month: one Query per shard",
            lambda: ops.get("/orders", query={"status": "Placed"}),
            pattern="ECOM-005",
        )
        cart = "/users/me/cart"
        for product_id in products[8:11]:
            buyer.put(f"{cart}/items/{product_id}", {"quantity": 2})
        measure_one("GET /users/me/cart", "3 lines", lambda: buyer.get(cart), pattern="CART")
        measure_one(
            "PUT /users/me/cart/items/{product_id}",
            "a 4th line",
            lambda: buyer.put(f"{cart}/items/{products[11]}", {"quantity": 1}),
            pattern="CART",
        )
        measure_one(
            "DELETE /users/me/cart/items/{product_id}",
            "one of 4 lines",
            lambda: buyer.delete(f"{cart}/items/{products[11]}"),
            pattern="CART",
        )
        checkout = "POST /users/me/cart/checkout"
        key = {"Idempotency-Key": "bench-checkout"}
        measure_one(
            checkout, "3 lines", lambda: buyer.post(f"{cart}/checkout", headers=key), expected=201, pattern="CART"
        )
        measure_one(
            checkout,
            "replay (the cart it emptied)",
            lambda: buyer.post(f"{cart}/checkout", headers=key),
            expected=201,
            pattern="CART",
        )
        measure_one(
            checkout,
            "empty cart",
            lambda: buyer.post(f"{cart}/checkout", headers=idempotency_key()),
            expected=409,
            pattern="CART",
        )
        measure_one("POST /orders/{order_id}/cancel", "5 lines", lambda: buyer.post(f"{path}/cancel"))
        measure_one("POST /orders/{order_id}/cancel", "already cancelled", lambda: buyer.post(f"{path}/cancel"))

        reviews = f"/products/{reviewed_product}/reviews"
        write = "POST /products/{product_id}/reviews"
        measure_one(
            write, "a buyer's review: purchase checked", lambda: buyer.post(reviews, review_body()), expected=201
        )
        measure_one(write, "a second review", lambda: buyer.post(reviews, review_body()), expected=409)
        measure_one(write, "not a buyer", lambda: newcomer.post(reviews, review_body()), expected=403)
        mine = f"{reviews}/me"
        measure_one(
            "GET /products/{product_id}/reviews/{user_id}", "one review", lambda: api.get(f"{reviews}/{buyer.sub}")
        )
        measure_one(
            "PUT /products/{product_id}/reviews/me",
            "If-Match current, rating changed",
            lambda: buyer.put(mine, review_body(rating=2), headers=if_match('"1"')),
        )
        measure_one("GET /products/{product_id}/reviews", "newest first, first page", lambda: api.get(reviews))
        measure_one(
            "GET /products/{product_id}/reviews",
            "best first, first page",
            lambda: api.get(reviews, query={"sort": "rating"}),
        )
        measure_one("GET /users/{user_id}/reviews", "a user's reviews", lambda: buyer.get("/users/me/reviews"))
        measure_one("DELETE /products/{product_id}/reviews/me", "own review", lambda: buyer.delete(mine), expected=204)

        # -- payments and shipments
        unpaid = placed_order(buyer, *five_lines)
        pay = f"/orders/{unpaid['order_id']}/payments"
        payment = {"amount": unpaid["total"], "payment_method": "tok_sandbox_visa"}
        started = measure_one(
            "POST /orders/{order_id}/payments",
            "5 lines: read + transaction",
            lambda: buyer.post(pay, payment, headers={"Idempotency-Key": "bench-pay"}),
            expected=202,
        )
        measure_one(
            "POST /orders/{order_id}/payments",
            "replay",
            lambda: buyer.post(pay, payment, headers={"Idempotency-Key": "bench-pay"}),
            expected=202,
        )
        measure_one(
            "POST /orders/{order_id}/payments",
            "another while in flight",
            lambda: buyer.post(pay, payment, headers=idempotency_key()),
            expected=409,
        )
        measure_one(
            "GET /payments",
            "status Pending: one Query per shard",
            lambda: ops.get("/payments", query={"status": "Pending"}),
            pattern="ECOM-007",
        )
        measure_one(
            "PaymentWorkerFunction",
            "settle one attempt (5 lines): sandbox approves",
            lambda: settle(started.json),
            pattern="worker",
        )
        measure_one("PaymentWorkerFunction", "the same message again", lambda: settle(started.json), pattern="worker")
        measure_one("GET /orders/{order_id}/payments", "one attempt", lambda: buyer.get(pay), pattern="ECOM-006")
        ship = f"/orders/{unpaid['order_id']}/shipments"
        created = measure_one(
            "POST /orders/{order_id}/shipments",
            "read + transaction",
            lambda: ops.post(ship, {"carrier": "dhl"}, headers=idempotency_key()),
            expected=201,
        )
        parcel = created.headers["Location"]
        measure_one("GET /orders/{order_id}/shipments/{shipment_id}", "one parcel", lambda: ops.get(parcel))
        measure_one(
            "PATCH /orders/{order_id}/shipments/{shipment_id}",
            "Shipped: the order moves too",
            lambda: ops.patch(parcel, {"status": "Shipped"}, headers=if_match('"1"')),
        )
        measure_one("GET /orders/{order_id}/shipments", "one parcel", lambda: buyer.get(ship), pattern="ECOM-008")
        history = f"/orders/{unpaid['order_id']}/history"
        measure_one(
            "GET /orders/{order_id}/history", "placed, paid, shipped", lambda: buyer.get(history), pattern="HISTORY"
        )
        measure_one(
            "GET /shipments",
            "Shipped by dhl, this month",
            lambda: ops.get("/shipments", query={"status": "Shipped", "carrier": "dhl"}),
            pattern="ECOM-010",
        )

        # -- refunds: a paid order of one line cancelled, its refund settled by the worker
        refunded = placed_order(buyer, line("P-BENCH-01", quantity=1))
        paid = buyer.post(
            f"/orders/{refunded['order_id']}/payments",
            {"amount": refunded["total"], "payment_method": "tok_sandbox_visa"},
            headers=idempotency_key(),
        )
        settle(paid.json)
        measure_one(
            "POST /orders/{order_id}/cancel",
            "Paid, 1 line: restock + refund started",
            lambda: buyer.post(f"/orders/{refunded['order_id']}/cancel"),
        )
        (with_refund,) = buyer.get(f"/orders/{refunded['order_id']}/payments").json["items"]
        measure_one(
            "PaymentWorkerFunction",
            "settle one refund: sandbox refunds, order Refunded",
            lambda: settle(with_refund),
            pattern="worker",
        )
        measure_one(
            "PaymentWorkerFunction", "the same refund message again", lambda: settle(with_refund), pattern="worker"
        )

        # -- the payment window: the sweep, over orders placed 40 minutes ago (seeded outside the meter)
        measure_one("OrderExpiryFunction", "a sweep, nothing due", sweep, pattern="job")
        for n in range(OVERDUE_ORDERS):
            placed_at = utc_now() - timedelta(minutes=40)
            seed_order(bootstrap.repository(), buyer.sub or "", placed_at, shard=n % 4, product_id=products[0])
        measure_one(
            "OrderExpiryFunction",
            f"a sweep of {OVERDUE_ORDERS} overdue one-line orders (per order: a tenth of each figure)",
            sweep,
            pattern="job",
        )

    return measure_one.results(
        FUNCTION,
        f"{PRODUCTS_IN_CATEGORY} products in the listed category, {ORDERS_OF_USER} orders of the listing user, "
        f"orders of one line unless stated, {REVIEWS_OF_PRODUCT} reviews of the reviewed product (a title and a "
        "sentence each); every list asks for its default page size.",
    )
