"""Orders against DynamoDB Local's own TransactWriteItems rate: `POST /orders` through the local stack's HTTP
API and through the handler in-process, beside the same transactions issued directly by boto3 (goal ≥ 0.8×).

DynamoDB Local applies transactions one at a time, so an order costs what its one TransactWriteItems
costs there, and the raw rate is the ceiling any path can reach on this engine. The raw side sends
exactly what placing an order writes (header, line, guarded stock decrement, outbox event, status
history, idempotency key record): each transaction is made by the service's and repository's own
``place_order`` on a table that keeps it instead of sending it, before the clients are released, and
goes out through a plain boto3 client. Every side writes the same table of the local stack on the same
engine, so the stack's stream consumers follow the raw orders as they follow the others. A client is a
process (bench/clients.py); each order is one line of quantity 1, spread over 16 products.
"""

import itertools
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bench.clients import InProcess, Measured, OverHttp, Request, Workload, rounds
from bench.local_http import HTTP, PROCESS_ORDER, beside, grouped, warm_every_worker, watched
from bench.markdown import table
from bench.stack import Stack
from local.harness.factories import line, order_body, product_body

BUYER = "U-BENCH-ORDERS"
PRODUCTS = [f"P-LOAD-ORDER-{n:02d}" for n in range(1, 17)]
CLIENTS = (1, 4)
GOAL = 0.8
ROUNDS = 5
WINDOW_S = 3.0  # each rate is the orders placed in this window
# Transactions a raw client builds before it is released: more than one client places in a window here
# (DynamoDB Local makes ~30-40 a second on this machine, whatever the number of clients).
PREBUILT = 400
IN_PROCESS = "in-process handler"
RAW = "raw TransactWriteItems (boto3)"


def _bodies(client: int) -> Iterator[dict[str, Any]]:
    """One-line orders cycling over the products, each client from its own offset."""
    products = PRODUCTS[client % len(PRODUCTS) :] + PRODUCTS[: client % len(PRODUCTS)]
    return (order_body(line(product)) for product in itertools.cycle(products))


@dataclass(frozen=True)
class Placements:
    """``POST /orders``, each with a key of its own."""

    def of(self, client: int) -> Iterator[Request]:
        return (("POST", "/orders", body, {"Idempotency-Key": str(uuid.uuid4())}) for body in _bodies(client))


@dataclass(frozen=True)
class RawOrders:
    """The orders' TransactWriteItems, issued by a plain boto3 client: the engine's own rate."""

    buyer: str
    expected: int = 201

    def prepare(self, client: int, clients: int) -> Callable[[], int]:
        import boto3
        from botocore.exceptions import ClientError

        transactions = iter(list(itertools.islice(placed_transactions(self.buyer, client), PREBUILT)))
        dynamodb = boto3.client("dynamodb")

        def place() -> int:
            try:
                dynamodb.transact_write_items(TransactItems=next(transactions))
            except ClientError as error:
                return 409 if error.response["Error"]["Code"] == "TransactionCanceledException" else 500
            return 201

        return place


def placed_transactions(buyer: str, client: int) -> Iterator[list[Any]]:
    """The TransactWriteItems items that placing each of ``client``'s orders sends: the service and the
    repository's own ``place_order`` run on a table that keeps each transaction instead of committing it,
    so the raw side cannot drift from what an order writes."""
    from shopfeed.commerce import bootstrap
    from shopfeed.commerce.orders import services
    from shopfeed.commerce.orders.repository import CommerceRepository
    from shopfeed.platform import dynamo
    from shopfeed.platform.idempotency import IdempotentRequest
    from shopfeed.platform.identity import Caller
    from shopfeed.platform.types import Money

    class Kept(dynamo.Table):
        def transact(
            self, transaction: dynamo.Transaction, busy: str, attempts: int = dynamo.TRANSACTION_ATTEMPTS
        ) -> None:
            kept.append(transaction.ops)

        def transact_once(self, transaction: dynamo.Transaction) -> None:
            kept.append(transaction.ops)

    kept: list[list[Any]] = []
    table = bootstrap.api_table()
    repository = CommerceRepository(Kept(table.client, table.name), bootstrap.cursors())
    caller = Caller(buyer, frozenset())
    for body in _bodies(client):
        lines = [(x["product_id"], x["quantity"], Money(**x["unit_price"])) for x in body["lines"]]
        request = IdempotentRequest.of(buyer, str(uuid.uuid4()), "place-order", body)
        services.place_order(repository, caller, request, lines)
        yield kept.pop()


class Orders(Measured):
    """Raw (baseline), in-process and HTTP rounds per client count."""

    def below_goal(self) -> list[str]:
        return self.shortfalls(
            HTTP, dict.fromkeys(CLIENTS, GOAL), "POST /orders over local HTTP ÷ raw TransactWriteItems"
        )

    def markdown(self) -> str:
        rows: list[list[Any]] = []
        for clients, taken in self.rounds.items():
            rows.append([RAW, clients, taken.rates().text(), "1.00"])
            rows.append([IN_PROCESS, clients, taken.rates(IN_PROCESS).text(), taken.ratios(IN_PROCESS).text(2)])
            rows.append([HTTP, clients, taken.rates(HTTP).text(), f"**{taken.ratios(HTTP).text(2)}**"])
        return "\n".join(
            [
                table(["path", "clients", "orders/s, median (min–max)", "÷ raw, median (min–max)"], rows, "lrrr"),
                "",
                f"{self.count} rounds of {WINDOW_S:.0f} s per path and client count, the first path rotating; "
                f"each round's ratio divides two rates measured back to back. Goal: local HTTP ≥ {GOAL}× raw. "
                f"{self.load_text()}." + self.unexpected(),
                "",
                self._cpu(),
            ]
        )

    def _cpu(self) -> str:
        one = self.rounds[1]
        paths = {
            RAW: grouped(one.cpu_ms()),
            IN_PROCESS: grouped(one.cpu_ms(IN_PROCESS)),
            HTTP: grouped(one.cpu_ms(HTTP)),
        }
        names = sorted({name for cpu in paths.values() for name in cpu}, key=PROCESS_ORDER.index)
        rows = [[name, *(f"{cpu.get(name, 0):.2f}" for cpu in paths.values())] for name in names]
        rows.append(["**all**", *(f"**{sum(cpu.values()):.2f}**" for cpu in paths.values())])
        walls = (one.rates(), one.rates(IN_PROCESS), one.rates(HTTP))
        rows.append(["wall time per order", *(f"{1000 / spread.median:.1f}" for spread in walls)])
        return "\n".join(
            [
                "CPU per order at one client, by process (ms, median over the rounds, from /proc; the other "
                "functions' workers are the stack's stream and queue consumers, which follow every side's orders "
                "as they land, so their share falls on whichever side runs while they catch up; the moto server "
                "carries the events those orders publish, to the queues the consumers read):",
                "",
                table(["process", *paths], rows, "lrrr"),
            ]
        )


def measure(stack: Stack, count: int = ROUNDS) -> Orders:
    load_before = os.getloadavg()[0]
    with beside(stack) as running:
        for product in PRODUCTS:
            running.post("/products", product_body(product, available=10_000_000), "U-BENCH-ADMIN", "admin")
        measured: dict[str, Workload] = {
            IN_PROCESS: InProcess(Placements(), BUYER, 201),
            HTTP: OverHttp(Placements(), running.url, running.token(BUYER), 201),
        }
        environment = running.table_environment()
        warm_every_worker(measured[HTTP], environment)
        watch = watched(running.page()["processes"], stack.engine_pid)
        results = {
            clients: rounds(RawOrders(BUYER), measured, clients, count, WINDOW_S, environment, watch)
            for clients in CLIENTS
        }
    return Orders(results, (load_before, os.getloadavg()[0]))
