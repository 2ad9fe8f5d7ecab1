"""Order placement throughput through the handler with N containers against DynamoDB Local (informative).

A container is a process with its own copy of the function, serving its share of the orders one
after another as a Lambda container does (threads cannot stand in: see local/harness/race.py).
This machine's cores bound the client side, and DynamoDB Local never answers TransactionConflict
(it applies transactions one at a time), so a hot product costs no retries here as it would on
DynamoDB. The numbers compare runs of this benchmark; they say nothing of what DynamoDB sustains.
"""

import http.client
import itertools
import json
import os
import statistics
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from bench.markdown import ms, table
from bench.stack import Stack, local_stack
from local.harness.factories import create_product, idempotency_key, line, order_body, product_body
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


# -- the local stack's HTTP API against the handler called in-process --------------------------------

LOCAL_WORKERS = 4  # CommerceApiFunction's worker processes in the local stack (--function-workers)
CONCURRENCY = (1, 2, 4)  # clients at once, each on its own keep-alive connection, up to the worker count
WINDOW_S = 5.0  # each rate is the requests answered in this window


@dataclass(frozen=True)
class LocalHttp:
    in_process_per_second: float
    http_per_second: dict[int, float]  # concurrency -> requests/s over HTTP
    load: float  # the 1-minute load average once measured: above the core count, rates stop rising

    @property
    def ratio(self) -> float:
        """Local HTTP ÷ in-process handler rate, one client at a time (the goal is ≥ 0.8)."""
        return self.http_per_second[1] / self.in_process_per_second

    def markdown(self) -> str:
        rows = [["in-process handler", 1, f"{self.in_process_per_second:.0f}", "1.00"]]
        rows += [
            [f"local HTTP, {LOCAL_WORKERS} workers", clients, f"{rate:.0f}", f"{rate / self.in_process_per_second:.2f}"]
            for clients, rate in self.http_per_second.items()
        ]
        return "\n".join(
            [
                table(["path", "clients", "GET /products/{id} per s", "÷ in-process"], rows, "lrrr"),
                "",
                f"HTTP ÷ in-process at one client: **{self.ratio:.2f}×** (goal ≥ 0.8×). The in-process rate "
                "calls the handler with a payload-2.0 event; the HTTP rate goes through `make dev`'s server, "
                "authorizer, gateway and a worker process, each client on one keep-alive connection. "
                f"Load average when measured: {self.load:.1f} on {os.cpu_count()} cores (throughput can rise "
                "with clients only while cores are free: the stack, its workers, DynamoDB Local and the "
                "clients share them).",
            ]
        )


def _rate(call: Callable[[], int], clients: int = 1) -> float:
    """Requests answered per second by ``clients`` threads calling ``call`` for WINDOW_S."""
    counts = [0] * clients
    deadline = time.monotonic() + WINDOW_S

    def run(slot: int) -> None:
        while time.monotonic() < deadline:
            if call() == 200:
                counts[slot] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=run, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.monotonic() - started)


def _http_get(url: str, path: str, token: str) -> Callable[[], int]:
    """A GET on one keep-alive connection of this thread (http.client: nothing between us and the socket)."""
    connections = threading.local()
    host, port = url.removeprefix("http://").split(":")

    def get() -> int:
        if not hasattr(connections, "http"):
            connections.http = http.client.HTTPConnection(host, int(port), timeout=30)
        connections.http.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        response = connections.http.getresponse()
        response.read()
        return int(response.status)

    return get


def measure_local_http(stack: Stack) -> LocalHttp:
    """Both paths read the same item of the same warm DynamoDB Local: the local stack is started on the
    in-process benchmark's engine (``--dynamodb-endpoint``), so only the path differs, not the engine."""
    product = "P-LOAD-HTTP"
    reader = stack.api.as_user(BUYER)
    create_product(stack.api.as_user("U-BENCH-ADMIN", "admin"), product)
    options = ("--dynamodb-endpoint", stack.engine, "--function-workers", f"CommerceApiFunction={LOCAL_WORKERS}")
    with local_stack(*options) as running:
        created = urllib.request.Request(
            f"{running.url}/products",
            data=json.dumps(product_body(product)).encode(),
            headers={
                "Authorization": f"Bearer {running.token('U-BENCH-ADMIN', 'admin')}",
                "Content-Type": "application/json",
            },
            method="POST",
        )
        urllib.request.urlopen(created, timeout=30).close()
        get = _http_get(running.url, f"/products/{product}", running.token(BUYER))
        _rate(get, LOCAL_WORKERS)  # every worker warm before anything is measured
        # Measured with the stack running, so both rates see the same machine.
        in_process = _rate(lambda: reader.get(f"/products/{product}").status)
        http_rates = {clients: _rate(get, clients) for clients in CONCURRENCY}
    return LocalHttp(in_process, http_rates, os.getloadavg()[0])
