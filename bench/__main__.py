"""``python -m bench``: run every benchmark, print the report and save it to docs/benchmarks.md."""

import argparse
import os
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench import cold_start, counters, fanout, feed_round_trips, first_request, round_trips, throughput
from bench.load.report import section_of, with_section
from bench.machine import Machine
from bench.stack import commerce_stack
from local.cfn import ROOT

REPORT = ROOT / "docs" / "benchmarks.md"
ROUND_TRIPS = "## DynamoDB round trips and consumed capacity per request"
COLD_START = "## Cold start: importing each function (design §1)"
FIRST_REQUEST = "## Cold start: the first request against warm ones (design §1)"
COUNTERS = "## Exactly-once counters: write capacity per 100 likes"


def _progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=9, help="cold-start rounds (each imports every function once)")
    parser.add_argument("--output", type=Path, default=REPORT, help="where to save the report")
    parser.add_argument(
        "--only",
        choices=["round-trips", "cold-start", "first-request", "counters"],
        help="re-measure one section and put it in place of the report's (the rest is kept as it was)",
    )
    args = parser.parse_args()
    if args.only == "round-trips":
        _round_trips_alone(args.output)
        return
    if args.only == "cold-start":
        _progress(f"cold-start imports, {args.runs} runs each")
        _section_alone(args.output, COLD_START, _cold_start_section(cold_start.measure(args.runs)), args.only)
        return
    if args.only == "first-request":
        _progress("first and warm requests per function, primed and not (moto server)")
        _section_alone(args.output, FIRST_REQUEST, _first_request_section(first_request.measure()), args.only)
        return
    if args.only == "counters":
        _counters_alone(args.output)
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
        local_http = throughput.measure_local_http(stack)
        _progress("order throughput")
        load = throughput.measure(stack)
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
            _cold_start_section(imports),
            _first_request_section(requests),
            _round_trips_section(trips, feed_trips),
            _counters_section(counter_cost),
            "## Order placement throughput (informative)",
            "",
            throughput.__doc__ or "",
            load.markdown(),
            "",
            "## Fanout throughput (informative)",
            "",
            fanout.__doc__ or "",
            spread.markdown(),
            "",
            "## The local stack's HTTP API against the handler in-process",
            "",
            local_http.markdown(),
            "",
        ]
    )
    # The load test's section is measured by `make load --write` alone: kept as it was.
    report = with_section(report, kept) if (kept := section_of(_read(args.output))) else report
    print(report)
    args.output.write_text(report)
    _progress(f"saved {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")
    for row in requests.slow_first():
        _progress(f"first request of primed {row.case.function} ({row.case.what}) above 2× a warm one")
    if local_http.ratio < 0.8:
        _progress(f"local HTTP at {local_http.ratio:.2f}× the in-process rate, below the 0.8× goal")
    for measurement in [*trips.unexpected(), *feed_trips.unexpected()]:
        _progress(f"unexpected status {measurement.status}: {measurement.route} ({measurement.case})")


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


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


def _cold_start_section(imports: cold_start.ColdStart) -> str:
    return "\n".join([COLD_START, "", cold_start.__doc__ or "", imports.markdown(), ""])


def _first_request_section(requests: first_request.FirstRequests) -> str:
    return "\n".join([FIRST_REQUEST, "", first_request.__doc__ or "", requests.markdown(), ""])


def _section_alone(output: Path, title: str, section: str, only: str) -> None:
    """One section measured again in place of the report's, the others kept, the machine's load then noted."""
    report = output.read_text()
    # A section the report has no heading for yet goes before the throughput sections.
    start = report.index(title) if title in report else report.index("\n## Order placement") + 1
    end = report.index("\n## ", start + len(title)) + 1 if title in report else start
    taken = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    note = f"- the {only} section re-measured alone on {taken}, load average {load} (`python -m bench --only {only}`)\n"
    head = re.sub(rf"- the {only} section re-measured alone on .*\n", "", report[:start])
    # The note joins the list at the top: the first heading after it may be the section itself.
    output.write_text((head + section + "\n" + report[end:]).replace("\n\n## ", f"\n{note}\n## ", 1))
    _progress(f"saved the {only} section of {output}")


def _counters_section(cost: counters.CounterCost) -> str:
    return "\n".join([COUNTERS, "", counters.__doc__ or "", cost.markdown(), "", counters.BEFORE, ""])


def _round_trips_alone(output: Path) -> None:
    """The round-trips section measured again (what ``bench.capacity`` reads), the other sections kept."""
    with commerce_stack() as stack:
        _progress(f"round trips and consumed capacity (DynamoDB Local at {stack.engine})")
        trips = round_trips.measure(stack)
        feed_trips = feed_round_trips.measure(stack)
    _section_alone(output, ROUND_TRIPS, _round_trips_section(trips, feed_trips), "round-trips")
    for measurement in [*trips.unexpected(), *feed_trips.unexpected()]:
        _progress(f"unexpected status {measurement.status}: {measurement.route} ({measurement.case})")


def _counters_alone(output: Path) -> None:
    """The counters section measured again, the other sections kept."""
    with commerce_stack() as stack:
        _progress(f"exactly-once counters against a naive one (DynamoDB Local at {stack.engine})")
        cost = counters.measure(stack)
    _section_alone(output, COUNTERS, _counters_section(cost), "counters")


if __name__ == "__main__":
    main()
