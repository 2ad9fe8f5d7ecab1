"""``python -m bench``: run every benchmark, print the report and save it to docs/benchmarks.md."""

import argparse
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench import cold_start, fanout, feed_round_trips, first_request, local_http, orders, round_trips, throughput
from bench.machine import Machine
from bench.stack import commerce_stack
from local.cfn import ROOT

REPORT = ROOT / "docs" / "benchmarks.md"
ROUND_TRIPS = "## DynamoDB round trips and consumed capacity per request"
LOCAL_HTTP = "## The local stack's HTTP API against the handler in-process"
ORDERS = "## Orders against DynamoDB Local's own TransactWriteItems rate"


def _progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=9, help="cold-start rounds (each imports every function once)")
    parser.add_argument("--output", type=Path, default=REPORT, help="where to save the report")
    parser.add_argument(
        "--only",
        choices=["round-trips", "local-http", "orders"],
        help="re-measure one section and put it in place of the report's (the rest is kept as it was)",
    )
    args = parser.parse_args()
    if args.only == "round-trips":
        _round_trips_alone(args.output)
        return
    if args.only in ("local-http", "orders"):
        _paths_alone(args.only, args.output)
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
            "## Cold start: importing each function (design §1)",
            "",
            cold_start.__doc__ or "",
            imports.markdown(),
            "",
            "## Cold start: the first request against warm ones (design §1)",
            "",
            first_request.__doc__ or "",
            requests.markdown(),
            "",
            _round_trips_section(trips, feed_trips),
            "## Order placement throughput (informative)",
            "",
            throughput.__doc__ or "",
            load.markdown(),
            "",
            _section(ORDERS, orders.__doc__, order_rounds.markdown()),
            "## Fanout throughput (informative)",
            "",
            fanout.__doc__ or "",
            spread.markdown(),
            "",
            _section(LOCAL_HTTP, local_http.__doc__, http_rounds.markdown()),
        ]
    )
    print(report)
    args.output.write_text(report)
    _progress(f"saved {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")
    for row in requests.slow_first():
        _progress(f"first request of primed {row.function} above 2× a warm one")
    for shortfall in [*http_rounds.below_goal(), *order_rounds.below_goal()]:
        _progress(shortfall)
    for measurement in [*trips.unexpected(), *feed_trips.unexpected()]:
        _progress(f"unexpected status {measurement.status}: {measurement.route} ({measurement.case})")


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


def _round_trips_alone(output: Path) -> None:
    """The round-trips section measured again (what ``bench.capacity`` reads), the other sections kept."""
    with commerce_stack() as stack:
        _progress(f"round trips and consumed capacity (DynamoDB Local at {stack.engine})")
        trips = round_trips.measure(stack)
        feed_trips = feed_round_trips.measure(stack)
    report = output.read_text()
    start = report.index(ROUND_TRIPS)
    end = report.index("\n## ", start + len(ROUND_TRIPS)) + 1
    taken = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    note = f"- the round-trips section re-measured alone on {taken} (`python -m bench --only round-trips`)\n"
    head = re.sub(r"- the round-trips section re-measured alone on .*\n", "", report[:start])
    head = head.replace("\n\n## ", f"\n{note}\n## ", 1)
    output.write_text(head + _round_trips_section(trips, feed_trips) + report[end:])
    _progress(f"saved the round-trips section of {output}")
    for measurement in [*trips.unexpected(), *feed_trips.unexpected()]:
        _progress(f"unexpected status {measurement.status}: {measurement.route} ({measurement.case})")


def _section(heading: str, doc: str | None, body: str) -> str:
    return "\n".join([heading, "", doc or "", body, ""])


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


def _paths_alone(only: str, output: Path) -> None:
    """The local-HTTP or the orders section measured again, the other sections kept."""
    with commerce_stack() as stack:
        if only == "local-http":
            _progress("the local stack's HTTP API against the handler in-process")
            measured: local_http.LocalHttp | orders.Orders = local_http.measure(stack)
            heading, doc = LOCAL_HTTP, local_http.__doc__
        else:
            _progress("orders: local HTTP and in-process against raw TransactWriteItems")
            measured = orders.measure(stack)
            heading, doc = ORDERS, orders.__doc__
    section = _section(heading, doc, measured.markdown())
    taken = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    output.write_text(replace_section(output.read_text(), heading, section, only, taken))
    _progress(f"saved the {only} section of {output}")
    print(section)
    for shortfall in measured.below_goal():
        _progress(shortfall)


if __name__ == "__main__":
    main()
