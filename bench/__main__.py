"""``python -m bench``: run every benchmark, print the report and save it to docs/benchmarks.md."""

import argparse
import os
import re
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench import (
    cold_start,
    counters,
    fanout,
    feed_round_trips,
    first_request,
    flash_sale,
    local_http,
    orders,
    round_trips,
    throughput,
)
from bench.load.report import section_of, with_section
from bench.machine import Machine
from bench.stack import Stack, commerce_stack
from local.cfn import ROOT

REPORT = ROOT / "docs" / "benchmarks.md"
ROUND_TRIPS = "## DynamoDB round trips and consumed capacity per request"
COLD_START = "## Cold start: importing each function (design §1)"
FIRST_REQUEST = "## Cold start: the first request against warm ones (design §1)"
COUNTERS = "## Exactly-once counters: write capacity per 100 likes"
LOCAL_HTTP = "## The local stack's HTTP API against the handler in-process"
ORDERS = "## Orders against DynamoDB Local's own TransactWriteItems rate"
FLASH_SALE = "## Flash sale of one SKU: 1 bucket against N (informative)"

Measured = tuple[str, str, list[str]]
"""A section measured alone: its heading, its text, and what to warn of (goals missed, odd answers)."""


def _progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=9, help="cold-start rounds (each imports every function once)")
    parser.add_argument("--output", type=Path, default=REPORT, help="where to save the report")
    parser.add_argument(
        "--only",
        choices=[*ALONE, *ALONE_ON_A_STACK],
        help="re-measure one section and put it in place of the report's (the rest is kept as it was)",
    )
    args = parser.parse_args()
    if args.only:
        _measure_alone(args.only, args.output, args.runs)
        return

    started = time.monotonic()
    machine = Machine.describe()
    # Cold starts first, before the JVM of DynamoDB Local competes for the CPU.
    _progress(f"cold-start imports, {args.runs} runs each")
    imports = cold_start.measure(args.runs)
    _progress("first and warm requests per function, primed and not (moto server)")
    requests = first_request.measure()
    with commerce_stack() as stack:
        _progress(f"round trips and consumed capacity (DynamoDB Local at {stack.engine})")
        trips = round_trips.measure(stack)
        feed_trips = feed_round_trips.measure(stack)
        _progress("exactly-once counters against a naive one (100 likes)")
        counter_cost = counters.measure(stack)
        # Before the throughput benchmarks: the fanout one leaves DynamoDB Local holding ~40,000 items and
        # their stream records, which slowed every call of a stack started after it (measured: 16 local
        # HTTP requests/s against 187 on the same engine before it), and that is the engine, not the path.
        _progress("the local stack's HTTP API against the handler in-process")
        http_rounds = local_http.measure(stack)
        _progress("order throughput")
        load = throughput.measure(stack)
        # After the throughput rows, which are compared with older runs: these place thousands of orders
        # (every item and stream record of them stays in the engine), the throughput rows a few hundred.
        _progress("orders: local HTTP and in-process against raw TransactWriteItems")
        order_rounds = orders.measure(stack)
        _progress(
            f"flash sale ({flash_sale.UNITS} units, {flash_sale.BUYERS} buyers, 1 bucket and "
            f"{flash_sale.BUCKETS}, with and without conflicts, {flash_sale.ROUNDS} rounds)"
        )
        sale = flash_sale.measure(stack)
        _progress(f"fanout throughput ({fanout.AUDIENCE} followers, {fanout.ROUNDS} rounds)")
        spread = fanout.measure(stack)

    report = "\n".join(
        [
            "# shopfeed benchmarks",
            "",
            "Written by `make bench` (`python -m bench`); numbers are measured, never asserted by tests. "
            "Re-run it to refresh this file.",
            "",
            machine.markdown(),
            f"- duration: {time.monotonic() - started:.0f} s",
            "",
            _section(COLD_START, cold_start.__doc__, imports.markdown()),
            _section(FIRST_REQUEST, first_request.__doc__, requests.markdown()),
            _round_trips_section(trips, feed_trips),
            _counters_section(counter_cost),
            _section("## Order placement throughput (informative)", throughput.__doc__, load.markdown()),
            _section(ORDERS, orders.__doc__, order_rounds.markdown()),
            _section(FLASH_SALE, flash_sale.__doc__, sale.markdown()),
            _section("## Fanout throughput (informative)", fanout.__doc__, spread.markdown()),
            _section(LOCAL_HTTP, local_http.__doc__, http_rounds.markdown()),
        ]
    )
    # The load test's section is measured by `make load --write` alone: kept as it was.
    report = with_section(report, kept) if (kept := section_of(_read(args.output))) else report
    print(report)
    args.output.write_text(report)
    _progress(f"saved {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")
    for warning in [
        *_slow_first_requests(requests),
        *http_rounds.below_goal(),
        *order_rounds.below_goal(),
        *_unexpected(trips, feed_trips),
    ]:
        _progress(warning)


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _section(heading: str, doc: str | None, body: str) -> str:
    return "\n".join([heading, "", doc or "", body, ""])


def _round_trips_section(trips: round_trips.RoundTrips, feed_trips: round_trips.RoundTrips) -> str:
    return "\n".join(
        [
            ROUND_TRIPS,
            "",
            round_trips.__doc__ or "",
            "### Commerce API",
            "",
            trips.markdown(),
            "",
            "### Feed API",
            "",
            feed_round_trips.__doc__ or "",
            feed_trips.markdown(),
            "",
            feed_round_trips.CHANGES,
            "",
        ]
    )


def _counters_section(cost: counters.CounterCost) -> str:
    return "\n".join([COUNTERS, "", counters.__doc__ or "", cost.markdown(), "", counters.BEFORE, ""])


def _slow_first_requests(requests: first_request.FirstRequests) -> list[str]:
    return [
        f"first request of primed {row.case.function} ({row.case.what}) above 2× a warm one"
        for row in requests.slow_first()
    ]


def _unexpected(*measured: round_trips.RoundTrips) -> list[str]:
    return [
        f"unexpected status {measurement.status}: {measurement.route} ({measurement.case})"
        for trips in measured
        for measurement in trips.unexpected()
    ]


# The sections `--only` measures again, each alone: these need no stack...
def _cold_start_alone(runs: int) -> Measured:
    return COLD_START, _section(COLD_START, cold_start.__doc__, cold_start.measure(runs).markdown()), []


def _first_request_alone(runs: int) -> Measured:
    requests = first_request.measure()
    return (
        FIRST_REQUEST,
        _section(FIRST_REQUEST, first_request.__doc__, requests.markdown()),
        _slow_first_requests(requests),
    )


# ... and these run on the local stack (DynamoDB Local).
def _round_trips_alone(stack: Stack) -> Measured:
    """The round-trips section (what ``bench.capacity`` reads)."""
    trips, feed_trips = round_trips.measure(stack), feed_round_trips.measure(stack)
    return ROUND_TRIPS, _round_trips_section(trips, feed_trips), _unexpected(trips, feed_trips)


def _counters_alone(stack: Stack) -> Measured:
    return COUNTERS, _counters_section(counters.measure(stack)), []


def _local_http_alone(stack: Stack) -> Measured:
    measured = local_http.measure(stack)
    return LOCAL_HTTP, _section(LOCAL_HTTP, local_http.__doc__, measured.markdown()), measured.below_goal()


def _orders_alone(stack: Stack) -> Measured:
    measured = orders.measure(stack)
    return ORDERS, _section(ORDERS, orders.__doc__, measured.markdown()), measured.below_goal()


def _flash_sale_alone(stack: Stack) -> Measured:
    return FLASH_SALE, _section(FLASH_SALE, flash_sale.__doc__, flash_sale.measure(stack).markdown()), []


ALONE: dict[str, Callable[[int], Measured]] = {
    "cold-start": _cold_start_alone,
    "first-request": _first_request_alone,
}
ALONE_ON_A_STACK: dict[str, Callable[[Stack], Measured]] = {
    "round-trips": _round_trips_alone,
    "counters": _counters_alone,
    "local-http": _local_http_alone,
    "orders": _orders_alone,
    "flash-sale": _flash_sale_alone,
}


def _measure_alone(only: str, output: Path, runs: int) -> None:
    """One section measured again and put in place of the report's, the others kept as they were."""
    _progress(f"the {only} section alone")
    if only in ALONE:
        heading, section, warnings = ALONE[only](runs)
    else:
        with commerce_stack() as stack:
            heading, section, warnings = ALONE_ON_A_STACK[only](stack)
    taken = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    output.write_text(replace_section(_read(output), heading, section, only, f"{taken}, load average {load}"))
    _progress(f"saved the {only} section of {output}")
    for warning in warnings:
        _progress(warning)


def replace_section(report: str, heading: str, section: str, only: str, taken: str) -> str:
    """``report`` with the section under ``heading`` replaced by ``section`` (added at the end when it has
    none yet), and one line in the head saying when ``--only`` re-measured it (an older one goes)."""
    if heading in report:
        start = report.index(heading)
        end = report.find("\n## ", start + len(heading))
        report = report[:start] + section + (report[end + 1 :] if end >= 0 else "")
    else:
        report = report.rstrip("\n") + "\n\n" + section
    note = f"- the {only} section re-measured alone on {taken} (`python -m bench --only {only}`)\n"
    start = report.index("\n## ")
    head = re.sub(rf"- the {re.escape(only)} section re-measured alone on .*\n", "", report[:start])
    return head.rstrip("\n") + "\n" + note + report[start:]


if __name__ == "__main__":
    main()
