"""Order placement throughput through the handler with N containers against DynamoDB Local (informative).

A container is a process with its own copy of the function, serving its share of the orders one
after another as a Lambda container does (threads cannot stand in: see local/harness/race.py).
This machine's cores bound the client side, and DynamoDB Local never answers TransactionConflict
(it applies transactions one at a time), so a hot product costs no retries here as it would on
DynamoDB. The numbers compare runs of this benchmark; they say nothing of what DynamoDB sustains.
"""

import itertools
import statistics
from collections import Counter
from dataclasses import dataclass

from bench.markdown import ms, table
from bench.stack import Stack
from local.harness.factories import create_product, idempotency_key, line, order_body
from local.harness.race import Call, Served, in_containers

ORDERS_PER_RUN = 160
BUYER = "U-BENCH-THROUGHPUT"
# (containers, products the orders spread over); the last row puts every order on one hot product.
RUNS = ((1, 16), (4, 16), (8, 16), (8, 1))


@dataclass(frozen=True)
class Run:
    containers: int
    products: int
    served: list[Served]

    @property
    def statuses(self) -> Counter[int]:
        return Counter(s.answer.status for s in self.served)

    @property
    def seconds(self) -> float:
        """From the first order's start to the last one's end, across containers."""
        return max(s.started + s.seconds for s in self.served) - min(s.started for s in self.served)

    @property
    def per_second(self) -> float:
        return self.statuses[201] / self.seconds

    @property
    def p50(self) -> float:
        return statistics.median(s.seconds for s in self.served)

    @property
    def p95(self) -> float:
        return statistics.quantiles([s.seconds for s in self.served], n=20)[18]


@dataclass
class Throughput:
    runs: list[Run]

    def markdown(self) -> str:
        rows = [
            [
                run.containers,
                run.products,
                len(run.served),
                ", ".join(f"{count} × {status}" for status, count in sorted(run.statuses.items())),
                f"{run.per_second:.0f}",
                ms(run.p50),
                ms(run.p95),
            ]
            for run in self.runs
        ]
        return "\n".join(
            [
                table(
                    ["containers", "products", "orders", "answers", "orders/s", "p50 ms", "p95 ms"],
                    rows,
                    "rrrlrrr",
                ),
                "",
                "Each order is one line of quantity 1 through `POST /orders` (one TransactWriteItems). "
                "Containers are warmed by one read before a barrier releases them together; latency is "
                "the handler call as the container's client sees it, throughput counts from the first "
                "order's start to the last one's end.",
            ]
        )


def _orders(product_ids: list[str]) -> list[Call]:
    cycle = itertools.islice(itertools.cycle(product_ids), ORDERS_PER_RUN)
    return [Call("POST", "/orders", order_body(line(p)), idempotency_key(), BUYER) for p in cycle]


def measure(stack: Stack) -> Throughput:
    admin = stack.api.as_user("U-BENCH-ADMIN", "admin")
    spread = max(products for _, products in RUNS)
    product_ids = [f"P-LOAD-{n:02d}" for n in range(1, spread + 1)]
    for product_id in product_ids:
        create_product(admin, product_id, available=1_000_000)
    warm_up = Call("GET", f"/products/{product_ids[0]}", sub=BUYER)
    runs = []
    for containers, products in RUNS:
        orders = _orders(product_ids[:products])
        shares = [orders[n::containers] for n in range(containers)]
        served = in_containers(shares, warm_up)
        runs.append(Run(containers, products, [s for share in served for s in share]))
    return Throughput(runs)
