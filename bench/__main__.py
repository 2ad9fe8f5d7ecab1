"""``python -m bench``: run every benchmark, print the report and save it to docs/benchmarks.md."""

import argparse
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench import cold_start, fanout, feed_round_trips, first_request, flash_sale, round_trips, throughput
from bench.machine import Machine
from bench.stack import commerce_stack
from local.cfn import ROOT

REPORT = ROOT / "docs" / "benchmarks.md"
ROUND_TRIPS = "## DynamoDB round trips and consumed capacity per request"
FLASH_SALE = "## Flash sale of one SKU: 1 bucket against N (informative)"
FANOUT = "## Fanout throughput (informative)"


def _progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=9, help="cold-start rounds (each imports every function once)")
    parser.add_argument("--output", type=Path, default=REPORT, help="where to save the report")
    parser.add_argument(
        "--only",
        choices=["round-trips", "flash-sale"],
        help="re-measure one section and put it in place of the report's (the rest is kept as it was)",
    )
    args = parser.parse_args()
    if args.only == "round-trips":
        _round_trips_alone(args.output)
        return
    if args.only == "flash-sale":
        _flash_sale_alone(args.output)
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
        local_http = throughput.measure_local_http(stack)
        _progress("order throughput")
        load = throughput.measure(stack)
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
            _flash_sale_section(sale),
            FANOUT,
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
    print(report)
    args.output.write_text(report)
    _progress(f"saved {args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output}")
    for row in requests.slow_first():
        _progress(f"first request of primed {row.function} above 2× a warm one")
    if local_http.ratio < 0.8:
        _progress(f"local HTTP at {local_http.ratio:.2f}× the in-process rate, below the 0.8× goal")
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


def _flash_sale_section(sale: flash_sale.FlashSale) -> str:
    return "\n".join([FLASH_SALE, "", flash_sale.__doc__ or "", sale.markdown(), ""])


def _re_measured_note(head: str, section: str, option: str) -> str:
    """``head`` (the report up to its first section) saying ``section`` was re-measured alone, now."""
    taken = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    note = f"- the {section} section re-measured alone on {taken} (`python -m bench --only {option}`)\n"
    head = re.sub(rf"- the {section} section re-measured alone on .*\n", "", head)
    return head.replace("\n\n## ", f"\n{note}\n## ", 1)


def _flash_sale_alone(output: Path) -> None:
    """The flash sale measured again and put in place of the report's section (or before the fanout's)."""
    with commerce_stack() as stack:
        _progress(f"flash sale (DynamoDB Local at {stack.engine})")
        sale = flash_sale.measure(stack)
    report = output.read_text()
    if FLASH_SALE in report:
        start = report.index(FLASH_SALE)
        end = report.index("\n## ", start + len(FLASH_SALE)) + 1
    else:
        start = end = report.index(FANOUT)
    head = _re_measured_note(report[:start], "flash-sale", "flash-sale")
    output.write_text(head + _flash_sale_section(sale) + "\n" + report[end:])
    _progress(f"saved the flash-sale section of {output}")


def _round_trips_alone(output: Path) -> None:
    """The round-trips section measured again (what ``bench.capacity`` reads), the other sections kept."""
    with commerce_stack() as stack:
        _progress(f"round trips and consumed capacity (DynamoDB Local at {stack.engine})")
        trips = round_trips.measure(stack)
        feed_trips = feed_round_trips.measure(stack)
    report = output.read_text()
    start = report.index(ROUND_TRIPS)
    end = report.index("\n## ", start + len(ROUND_TRIPS)) + 1
    head = _re_measured_note(report[:start], "round-trips", "round-trips")
    output.write_text(head + _round_trips_section(trips, feed_trips) + report[end:])
    _progress(f"saved the round-trips section of {output}")
    for measurement in [*trips.unexpected(), *feed_trips.unexpected()]:
        _progress(f"unexpected status {measurement.status}: {measurement.route} ({measurement.case})")


if __name__ == "__main__":
    main()
