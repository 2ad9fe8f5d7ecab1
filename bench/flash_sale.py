"""A flash sale of one SKU on DynamoDB Local: its stock in 1 bucket against N, with and without conflicts.

Every buyer orders one unit of the same product through `POST /orders` (one TransactWriteItems), more
buyers than units, so the sale sells out and the rest are refused. Buyers are containers (processes,
as in the throughput benchmark: see local/harness/race.py) released together.

DynamoDB Local applies transactions one at a time and never answers TransactionConflict, so on its own
it cannot show what buckets buy: one bucket and N sell at the same rate there. The "conflicts" rows
put DynamoDB's rule back with a proxy in front of the engine (local/item_locks.py): a transaction that
reaches an item another one holds is cancelled for that item, as DynamoDB cancels it. The conflicts
then come from the buyers' own concurrency: on one bucket every buyer racing another conflicts and
retries on the same item; on N, a conflicted order retries on another bucket. The orders/s of this
machine compare the rows with each other; what DynamoDB sustains is the capacity model's column
(docs/data-model.md, "Flash sales: the capacity model of one SKU").

Scaled for `make bench` on 2 cores (a few minutes): 120 units, 144 buyers in 8 containers, 3 rounds
per row; `python -m bench.flash_sale --units 10000 --buyers 12000 --containers 200` runs the issue's
sale where cores allow.
"""

import argparse
import contextlib
import os
import statistics
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from bench.markdown import table
from bench.stack import Stack, commerce_stack
from local.harness.factories import create_product, idempotency_key, line, order_body
from local.harness.race import Call, Served, in_containers
from local.item_locks import Attempt, item_locks
from shopfeed.commerce import keys
from shopfeed.commerce.inventory.stock import StockRepository
from shopfeed.commerce.models import DEFAULT_WAREHOUSE
from shopfeed.platform import clients, dynamo

UNITS = 120
BUYERS = 144
CONTAINERS = 8
BUCKETS = 8
ROUNDS = 3
# The capacity model's planned rate of one bucket in DynamoDB (docs/data-model.md): 20 % conflicts at
# a 20 ms hold, 0.2 / 0.020 s.
MODEL_ORDERS_PER_BUCKET = 10

CONTENTION = "https://shopfeed.dev/problems/contention"
INSUFFICIENT = "https://shopfeed.dev/problems/insufficient-stock"


@dataclass(frozen=True)
class Sale:
    """One round of one row: what the buyers were answered, what is left, what the proxy saw."""

    served: list[Served]
    left: int  # units left in the buckets once every buyer was answered
    conflicts: int  # transactions cancelled by the proxy for a held bucket
    moved: int  # orders placed on another bucket than one they conflicted on

    @property
    def answers(self) -> Counter[str]:
        return Counter(_outcome(s) for s in self.served)

    @property
    def seconds(self) -> float:
        return max(s.started + s.seconds for s in self.served) - min(s.started for s in self.served)

    @property
    def per_second(self) -> float:
        return self.answers["sold"] / self.seconds


def _outcome(served: Served) -> str:
    if served.answer.status == 201:
        return "sold"
    if served.answer.status == 409 and served.answer.json.get("type") == INSUFFICIENT:
        return "sold out"
    if served.answer.status == 409 and served.answer.json.get("type") == CONTENTION:
        return "contention"
    return str(served.answer.status)


@dataclass
class Row:
    buckets: int
    conflicts: bool
    sales: list[Sale] = field(default_factory=list)

    def cells(self, units: int) -> list[object]:
        rates = [sale.per_second for sale in self.sales]
        last = self.sales[-1]
        model = "–" if not self.conflicts else f"{self.buckets * MODEL_ORDERS_PER_BUCKET:,}"
        return [
            self.buckets,
            "yes" if self.conflicts else "no",
            f"{statistics.median(rates):.0f} ({min(rates):.0f}–{max(rates):.0f})",
            ", ".join(f"{n} {outcome}" for outcome, n in sorted(last.answers.items())),
            max(sale.left for sale in self.sales),
            "yes" if all(sale.answers["sold"] == units for sale in self.sales) else "no",
            f"{statistics.median(sale.conflicts for sale in self.sales):.0f}",
            f"{statistics.median(sale.moved for sale in self.sales):.0f}",
            model,
        ]


@dataclass
class FlashSale:
    units: int
    buyers: int
    containers: int
    rows: list[Row]
    load: float  # the 1-minute load average once measured (the machine is shared)

    def markdown(self) -> str:
        header = [
            "buckets",
            "conflicts",
            "orders/s, median (min–max)",
            "answers (last round)",
            "units left (max)",
            "sold = units, every round",
            "conflicts (median)",
            "orders moved bucket (median)",
            "DynamoDB model orders/s",
        ]
        rounds = len(self.rows[0].sales)
        return "\n".join(
            [
                table(header, [row.cells(self.units) for row in self.rows], "rlrlrlrrr"),
                "",
                f"{self.units} units of one product, {self.buyers} buyers of one unit each in {self.containers} "
                f"containers, {rounds} rounds a row (a fresh product each). *sold out* is 409 "
                "`insufficient-stock`, the only refusal a sale should give, and only once no bucket holds a unit; "
                "*contention* is 409 `contention` (conflicts outlasted the order's retries). *conflicts*: "
                "transactions the proxy cancelled on a held bucket; *moved*: orders placed on another bucket than "
                "one they had conflicted on. The model column is what the buckets sustain in DynamoDB at the "
                "planned 20 % conflicts (10 orders/s a bucket), not a measurement. Load average when measured: "
                f"{self.load:.1f} on {os.cpu_count()} cores.",
            ]
        )


def _stock(stack: Stack) -> StockRepository:
    return StockRepository(dynamo.Table(clients.dynamodb(), stack.table))


def _sale(stack: Stack, product_id: str, units: int, buyers: int, containers: int, buckets: int) -> list[Served]:
    admin = stack.api.as_user("U-BENCH-ADMIN", "admin")
    create_product(admin, product_id, available=units)
    if buckets > 1:  # a product starts with one bucket; the sale's admin splits it (a resize keeps the units)
        _stock(stack).adjust_warehouse(product_id, DEFAULT_WAREHOUSE, 1, 0, buckets)
    orders = [
        Call("POST", "/orders", order_body(line(product_id)), idempotency_key(), f"U-SALE-{n:05d}")
        for n in range(buyers)
    ]
    warm_up = Call("GET", f"/products/{product_id}", sub="U-SALE-WARM")
    served = in_containers([orders[n::containers] for n in range(containers)], warm_up)
    return [s for share in served for s in share]


def _left(stack: Stack, product_id: str) -> int:
    return sum(level.available for level in _stock(stack).levels(product_id))


def _order_and_bucket(attempt: Attempt, product_id: str) -> tuple[str | None, str | None]:
    """The order a transaction places (its header's id) and the product's bucket it takes from."""
    order = bucket = None
    for _, pk, sk in attempt.items:
        with contextlib.suppress(ValueError):  # not an order header, not a bucket: another item
            if sk == keys.META and order is None:
                order = keys.parse_order_id(pk)
            elif sk == keys.STOCK_ITEM and keys.parse_stock_bucket(pk)[0] == product_id:
                bucket = pk
    return order, bucket


@contextlib.contextmanager
def _containers_reach(endpoint: str) -> Iterator[None]:
    """Containers started inside reach DynamoDB at ``endpoint`` (they copy this process's environment;
    this process's own clients, made before, keep theirs)."""
    before = os.environ["AWS_ENDPOINT_URL_DYNAMODB"]
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = endpoint
    try:
        yield
    finally:
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = before


def moves_after_conflicts(attempts: Sequence[Attempt], product_id: str) -> tuple[int, int]:
    """(conflicts on the product's buckets, orders placed on another bucket than one they conflicted on)."""
    conflicts = 0
    conflicted: dict[str, set[str]] = {}
    placed: dict[str, str] = {}
    for attempt in attempts:
        order, bucket = _order_and_bucket(attempt, product_id)
        if order is None or bucket is None:
            continue
        if attempt.conflicted is not None and attempt.conflicted[1] == bucket:
            conflicts += 1
            conflicted.setdefault(order, set()).add(bucket)
        elif attempt.applied:
            placed[order] = bucket
    moved = sum(1 for order, buckets in conflicted.items() if order in placed and placed[order] not in buckets)
    return conflicts, moved


def measure(
    stack: Stack,
    units: int = UNITS,
    buyers: int = BUYERS,
    containers: int = CONTAINERS,
    buckets: int = BUCKETS,
    rounds: int = ROUNDS,
) -> FlashSale:
    rows = [Row(1, False), Row(buckets, False), Row(1, True), Row(buckets, True)]
    with item_locks(stack.engine) as (proxy, locks):
        for n in range(rounds):
            # Rows alternate within a round, so a burst of load from other processes slows every row.
            for row in rows:
                product_id = f"P-SALE-{row.buckets}-{'C' if row.conflicts else 'F'}-{n}"
                endpoint = proxy if row.conflicts else stack.engine
                with _containers_reach(endpoint):
                    served = _sale(stack, product_id, units, buyers, containers, row.buckets)
                conflicts, moved = moves_after_conflicts(locks.take(), product_id)
                row.sales.append(Sale(served, _left(stack, product_id), conflicts, moved))
    return FlashSale(units, buyers, containers, rows, os.getloadavg()[0])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.flash_sale", description=__doc__)
    parser.add_argument("--units", type=int, default=UNITS)
    parser.add_argument("--buyers", type=int, default=BUYERS)
    parser.add_argument("--containers", type=int, default=CONTAINERS)
    parser.add_argument("--buckets", type=int, default=BUCKETS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args()
    with commerce_stack() as stack:  # stdout is the handler's inside: the report is printed after
        sale = measure(stack, args.units, args.buyers, args.containers, args.buckets, args.rounds)
    print(sale.markdown())


if __name__ == "__main__":
    main()
