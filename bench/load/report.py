"""The report of a load run, read from Locust's statistics as CSV (the locustfile writes them once its
users stopped): per route the requests, errors, p50/p95/p99 and rate; the expected refusals on lines of
their own; the errors by cause."""

import csv
from dataclasses import dataclass
from pathlib import Path

from bench.load import mix

MAX_CAUSES = 20  # error causes listed; Locust groups them by route and message already
# docs/benchmarks.md's section of `make load --write`; `make bench` rewrites the file and keeps it.
SECTION = "## Load test: `make load` against the local stack"


@dataclass(frozen=True)
class Line:
    name: str
    requests: int
    errors: int
    p50: str
    p95: str
    p99: str
    rate: float

    @property
    def refusal(self) -> bool:
        return " → " in self.name

    def row(self) -> str:
        return self.row_as(self.name if self.refusal else f"`{self.name}`")

    def row_as(self, name: str) -> str:
        return f"| {name} | {self.requests} | {self.errors} | {self.p50} | {self.p95} | {self.p99} | {self.rate:.1f} |"


@dataclass(frozen=True)
class Cause:
    route: str
    error: str
    occurrences: int


@dataclass(frozen=True)
class Report:
    lines: list[Line]
    total: Line
    causes: list[Cause]

    @classmethod
    def read(cls, prefix: Path) -> "Report":
        with Path(f"{prefix}_stats.csv").open(newline="") as stats:
            rows = list(csv.DictReader(stats))
        lines = [
            Line(
                name=row["Name"],
                requests=int(row["Request Count"]),
                errors=int(row["Failure Count"]),
                p50=row["50%"],
                p95=row["95%"],
                p99=row["99%"],
                rate=float(row["Requests/s"]),
            )
            for row in rows
        ]
        with Path(f"{prefix}_failures.csv").open(newline="") as failures:
            causes = [Cause(row["Name"], row["Error"], int(row["Occurrences"])) for row in csv.DictReader(failures)]
        total = next(line for line in lines if line.name == "Aggregated")
        return cls([line for line in lines if line is not total], total, causes)

    @property
    def errors(self) -> int:
        return self.total.errors

    @property
    def routes(self) -> dict[str, Line]:
        """The answered lines of each route (refusals not among them)."""
        return {line.name: line for line in self.lines if not line.refusal}

    @property
    def refusals(self) -> list[Line]:
        return [line for line in self.lines if line.refusal]

    def missing(self) -> list[str]:
        """The routes of the mix that no request reached."""
        return [route for route in mix.ROUTES if route not in self.routes]

    def markdown(self) -> str:
        header = ["| route | requests | errors | p50 ms | p95 ms | p99 ms | req/s |", "|---|--:|--:|--:|--:|--:|--:|"]
        routes = sorted(self.routes.values(), key=lambda line: mix.ROUTES.index(line.name))
        table = [*header, *(line.row() for line in routes), self.total.row_as("**all**")]
        refused = ["", "Expected refusals (not errors):", ""]
        refused += [*header, *(line.row() for line in self.refusals)] if self.refusals else ["none"]
        causes = [f"- `{c.route}`: {c.error} × {c.occurrences}" for c in self.causes[:MAX_CAUSES]]
        missing = self.missing()
        return "\n".join(
            [
                *table,
                *refused,
                "",
                f"Errors (5xx, unexpected 4xx, no answer): {self.errors}" + (":" if causes else ""),
                *causes,
                *([f"Routes of the mix never reached: {', '.join(missing)}"] if missing else []),
            ]
        )


def section_of(text: str) -> str:
    """The load test's section of a benchmarks report (to its end or the next section), or ""."""
    start = text.find(SECTION)
    if start < 0:
        return ""
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end >= 0 else len(text)].rstrip("\n") + "\n"


def with_section(text: str, section: str) -> str:
    """``text`` with its load test section replaced by ``section`` (appended when it has none)."""
    if old := section_of(text):
        return text.replace(old, section)
    return text.rstrip("\n") + "\n\n" + section
