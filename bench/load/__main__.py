"""``python -m bench.load`` (``make load``): Locust runs the walkthrough's traffic mix, then the report.

Against the local stack (the default, ``make dev`` on :3000) it mints a token per simulated user with
the stack's key; against a deployed stack give its URL and a token (``--token``, several times, or
``--tokens-file`` with one a line), and an admin token or the products to order. Everything it needs is
made through the API: its users register with ``POST /users``, an admin creates the products it orders
(a plentiful one and a scarce one, whose sold-out orders show as refusals). Exits 1 when any request
was an error (a 5xx, an unexpected 4xx, no answer).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

from bench.load import mix
from bench.load.report import SECTION, Report, with_section
from local import STATE_DIR
from local.auth import SigningKey, issuer_for
from local.cfn import ROOT

LOCUST = ROOT / ".tools" / "bin" / "locust"  # installed by `make deps` / `make load`, pinned in the Makefile
LOCUSTFILE = Path(__file__).with_name("locustfile.py")
BENCHMARKS = ROOT / "docs" / "benchmarks.md"
ABOUT = """\
Locust (`bench/load/`) runs on the same cores as the stack. Each user waits 0.5–1.5 s between actions,
so 20 users offer at most ~20 requests a second when answers are instant; each registers and goes
through the walkthrough once (every route, every load product ordered), then acts at random by the
weights of `bench/load/mix.py`. The local stack runs every function with two worker processes (its
stand-in for reserved concurrency) on DynamoDB Local. Read the latencies against the load average:
above the number of CPUs, requests wait for a core, and the figures say more about the machine than
about the handlers (the handlers' own speed is in the sections above). The refusals are the scarce
`P-LOAD-LAMP` (5 in stock when first made) selling out: 409 by design, not errors.
"""
PRICE = {"amount": 1500, "currency": "EUR"}  # a total the payment sandbox approves
# Made by the admin when missing (409 when a former run made them), with how often users order each: the
# scarce one sells out after a few orders, and from then on its orders are the run's expected refusals.
PRODUCTS = (
    ({"product_id": "P-LOAD-MUG", "name": "Load Mug", "category": "load", "price": PRICE, "available": 10**8}, 4),
    ({"product_id": "P-LOAD-LAMP", "name": "Load Lamp", "category": "load", "price": PRICE, "available": 5}, 1),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=f"http://127.0.0.1:{os.environ.get('PORT', '3000')}", help="the API")
    parser.add_argument("--token", action="append", default=[], help="a customer's bearer token (repeatable)")
    parser.add_argument("--tokens-file", type=Path, help="customers' bearer tokens, one a line")
    parser.add_argument("--admin-token", help="an admin's token, to create the load products")
    parser.add_argument("--product", action="append", default=[], help="order this product (repeatable)")
    parser.add_argument("--users", type=int, default=20, help="simulated users")
    parser.add_argument("--spawn-rate", type=float, help="users started a second (default: all in a second)")
    parser.add_argument("--seconds", type=int, default=60, help="how long the load runs")
    parser.add_argument("--state-dir", type=Path, default=STATE_DIR, help="the local stack's (its signing key)")
    parser.add_argument("--out", type=Path, help="where Locust's CSV and log go (default: a new temporary folder)")
    parser.add_argument("--write", action="store_true", help=f"put the report in docs/benchmarks.md ({SECTION})")
    args = parser.parse_args(argv)

    if not LOCUST.is_file():
        print(f"{LOCUST} is missing: run `make deps`", file=sys.stderr)
        return 2
    run = datetime.now(UTC).strftime("%Y%m%d%H%M%S") + uuid.uuid4().hex[:4]
    tokens = [*args.token, *(args.tokens_file.read_text().split() if args.tokens_file else [])]
    local = not tokens
    if local:
        identities = _local_identities(args.url, args.state_dir, run, args.users)
        admin_token = args.admin_token or _local_token(args.url, args.state_dir, "U-ADMIN", "admin")
    else:
        identities = [{"user_id": mix.subject(token), "token": token} for token in tokens]
        admin_token = args.admin_token
    if not admin_token and not args.product:
        parser.error("a deployed stack needs --admin-token (to create the load products) or --product")
    products = _products(args.url, admin_token, args.product, identities[0]["token"])

    out = args.out or Path(tempfile.mkdtemp(prefix="shopfeed-load-"))
    out.mkdir(parents=True, exist_ok=True)
    plan = out / "plan.json"
    plan.write_text(json.dumps({"run": run, "identities": identities, "products": products}))
    load_before = os.getloadavg()
    _locust(args, out, plan)
    report = Report.read(out / "load")
    heading = (
        f"{args.users} users for {args.seconds} s against {args.url} ({len(identities)} identities), "
        f"load average before {_figures(load_before)}, after {_figures(os.getloadavg())} ({os.cpu_count()} CPUs)"
    )
    print(f"{heading}; Locust's CSV in {out}\n\n{report.markdown()}")
    if args.write:
        _write_section(args, heading, report)
    return 1 if report.errors else 0


def _local_token(url: str, state_dir: Path, sub: str, *groups: str, key: SigningKey | None = None) -> str:
    port = urlsplit(url).port or 80
    return (key or SigningKey.load_or_create(state_dir)).mint(issuer_for(port), sub, groups)


def _local_identities(url: str, state_dir: Path, run: str, users: int) -> list[dict[str, str]]:
    """One new user per simulated user: they register in the run, so every run starts them afresh. The
    key is read once: reading it checks it (0.1-0.2 s), minting a token takes milliseconds."""
    key = SigningKey.load_or_create(state_dir)
    subs = [f"U-LOAD-{run}-{n:03d}" for n in range(users)]
    return [
        {"user_id": sub, "token": _local_token(url, state_dir, sub, key=key), "email": f"{sub.lower()}@example.com"}
        for sub in subs
    ]


def _products(url: str, admin_token: str | None, named: list[str], token: str) -> list[dict[str, Any]]:
    """The products the users order, as the API serves them (their price and category): the named ones,
    else the load products, created by the admin where missing."""
    http = requests.Session()
    weights = dict.fromkeys(named, 1)
    if not named:
        for product, weight in PRODUCTS:
            created = http.post(
                url + mix.path(mix.CREATE_PRODUCT), json=product, headers=_bearer(admin_token), timeout=30
            )
            if created.status_code not in (201, 409):
                raise SystemExit(f"{mix.CREATE_PRODUCT} answered {created.status_code}: {created.text}")
            weights[str(product["product_id"])] = weight
    products = []
    for product_id, weight in weights.items():
        answer = http.get(url + mix.path(mix.GET_PRODUCT, product_id=product_id), headers=_bearer(token), timeout=30)
        if answer.status_code != 200:
            raise SystemExit(f"{mix.GET_PRODUCT} of {product_id} answered {answer.status_code}: {answer.text}")
        product = answer.json()
        products.append({key: product[key] for key in ("product_id", "name", "category", "price")} | {"weight": weight})
    return products


def _bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _locust(args: argparse.Namespace, out: Path, plan: Path) -> None:
    command = [
        *(str(LOCUST), "-f", str(LOCUSTFILE), "--headless", "--host", args.url),
        *("--users", str(args.users), "--spawn-rate", str(args.spawn_rate or args.users)),
        *("--run-time", f"{args.seconds}s", "--only-summary"),
        # At the end a user finishes the action it is in (up to 10 s): no request is cut off half-answered.
        *("--stop-timeout", "10"),
        # The report says what failed; Locust's own exit code would count refusals' siblings alike.
        *("--exit-code-on-error", "0", "--logfile", str(out / "locust.log")),
    ]
    environment = os.environ | {"LOAD_PLAN": str(plan), "LOAD_REPORT": str(out / "load"), "PYTHONPATH": str(ROOT)}
    with (out / "locust.out").open("wb") as output:
        started = time.monotonic()
        subprocess.run(command, env=environment, stdout=output, stderr=subprocess.STDOUT, check=True)
    print(f"[load] Locust ran {time.monotonic() - started:.0f} s", file=sys.stderr)


def _figures(load: tuple[float, float, float]) -> str:
    return " / ".join(f"{value:.2f}" for value in load)


def _write_section(args: argparse.Namespace, heading: str, report: Report) -> None:
    taken = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = (
        f"{SECTION}\n\n`make load USERS={args.users} DURATION={args.seconds}` on {taken}: {heading}. "
        f"Per route, milliseconds; p50/p95/p99 as Locust computes them.\n\n{report.markdown()}\n\n{ABOUT}"
    )
    BENCHMARKS.write_text(with_section(BENCHMARKS.read_text(), section))
    print(f"[load] saved the report in {BENCHMARKS.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
