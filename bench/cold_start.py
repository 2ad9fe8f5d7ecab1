"""Cold-start imports per function, next to ``import boto3, pydantic`` and the library pieces they build on.

Each import runs in a fresh interpreter (the project venv, Python 3.13 like the runtime), with the
function's directory and the layer (shared/) first on sys.path, as Lambda puts /var/task and
/opt/python. Only the import is timed, not interpreter start-up, which both sides pay alike.
Reference rows import the baseline plus one library piece the functions build on, so each
function's floor is visible next to it: each function row names the reference of its kind (an HTTP
entry point the HTTP resolver, a stream or queue consumer the BatchProcessor, any other function
Logger + Metrics, read from its events in template.yaml) and its time over that floor's in the same
round. An API function should import within 1.6× the baseline (the resolver alone is ~1.45×, data
model decision 176); which modules each function may load is a test (tests/unit/test_import_graph.py),
not a timing. The import is timed without priming (no AWS_LAMBDA_FUNCTION_NAME): priming is part of
init, and the first-request table shows both.
"""

import json
import os
import re
import site
import statistics
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bench.markdown import ms, table
from local import cfn
from local.cfn import ROOT

BASELINE = "import boto3, pydantic"
HTTP_RESOLVER = "Powertools HTTP API resolver with validation"
BATCH_PROCESSOR = "Powertools BatchProcessor (DynamoDB Streams)"
LOGGER_AND_METRICS = "Powertools Logger + Metrics"
FUNCTIONS = ROOT / "functions"
SHARED = ROOT / "shared"

# The baseline plus one piece each: what no function using that piece can import faster than.
REFERENCES = {
    "pydantic models": f"{BASELINE}; from pydantic import BaseModel",
    LOGGER_AND_METRICS: f"{BASELINE}; from aws_lambda_powertools import Logger, Metrics",
    HTTP_RESOLVER: (
        f"{BASELINE}; from aws_lambda_powertools.event_handler import APIGatewayHttpResolver; "
        "APIGatewayHttpResolver(enable_validation=True)"
    ),
    BATCH_PROCESSOR: (
        f"{BASELINE}; from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType; "
        "BatchProcessor(event_type=EventType.DynamoDBStreams)"
    ),
}

# What a function's environment holds in Lambda (template Globals plus the runtime's own variables),
# since Powertools reads some of it at import.
LAMBDA_ENVIRONMENT = {
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
    "POWERTOOLS_SERVICE_NAME": "shopfeed",
    "POWERTOOLS_METRICS_NAMESPACE": "shopfeed",
    "POWERTOOLS_LOG_LEVEL": "INFO",
}

_TIMED = """
import json, sys, time
sys.path[:0] = {paths!r}
started = time.perf_counter()
{statement}
print(json.dumps({{"seconds": time.perf_counter() - started}}))
"""

# What a cold start costs when the deployed code has no bytecode: compiling every imported module
# that lives outside the standard library (the layer's packages and our own code).
_COMPILE_COST = """
import json, sys, time
sys.path[:0] = {paths!r}
{statement}
roots = tuple({roots!r})
seconds, count = 0.0, 0
for module in list(sys.modules.values()):
    path = getattr(module, "__file__", None) or ""
    if path.endswith(".py") and path.startswith(roots):
        with open(path, "rb") as handle:
            source = handle.read()
        started = time.perf_counter()
        compile(source, path, "exec", dont_inherit=True)
        seconds += time.perf_counter() - started
        count += 1
print(json.dumps({{"seconds": seconds, "modules": count}}))
"""

_PROFILE_MARK = "--- beyond the baseline ---"
_PROFILED = """
import sys
sys.path[:0] = {paths!r}
{baseline}
sys.stderr.write({mark!r} + "\\n")
{statement}
"""
_IMPORTTIME_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| *(\S+)")


@dataclass(frozen=True)
class Target:
    label: str
    statement: str
    paths: tuple[str, ...] = ()
    floor: str | None = None  # the REFERENCES row a function of this kind cannot import faster than


@dataclass
class Measured:
    target: Target
    samples: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)  # to the baseline's time in the same round
    over_floor: list[float] = field(default_factory=list)  # to its floor's time in the same round
    compile_seconds: float = 0.0
    compiled_modules: int = 0
    heaviest: list[tuple[str, float]] = field(default_factory=list)  # (package, ms beyond baseline)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def ratio(self) -> float:
        """Median of the per-round ratios: a round runs every target back to back, so a burst of
        load from elsewhere slows both sides of a ratio rather than one side of a median."""
        return statistics.median(self.ratios)


@dataclass
class ColdStart:
    baseline: Measured
    references: list[Measured]
    functions: list[Measured]
    broken: dict[str, str]
    runs: int
    bytecode: str

    def _row(self, measured: Measured, kind: str) -> list[object]:
        low, _, high = statistics.quantiles(measured.ratios, n=4)
        floor = "–"
        if measured.target.floor is not None:
            reference = next(m for m in self.references if m.target.label == measured.target.floor)
            floor = f"{measured.target.floor} ({reference.ratio:.2f}×): {statistics.median(measured.over_floor):.2f}×"
        return [
            measured.target.label,
            ms(measured.median),
            ms(measured.best),
            f"{measured.ratio:.2f}",
            f"{low:.2f}–{high:.2f}",
            kind,
            floor,
        ]

    def markdown(self) -> str:
        rows = [self._row(self.baseline, "–")]
        rows += [self._row(m, "reference") for m in self.references]
        rows += [self._row(m, "function") for m in self.functions]
        rows += [[label, "–", "–", "–", "–", f"does not import: {error}", "–"] for label, error in self.broken.items()]
        headers = ["import", "median ms", "best ms", "× baseline", "middle half", "row", "floor (× baseline): × floor"]
        parts = [
            table(headers, rows, "lrrrrll"),
            "",
            f"{self.runs} rounds; a round imports every row once, each in a fresh interpreter. "
            "× baseline is the median over rounds of the row's time over the baseline's time in the same "
            "round, which a burst of load from other processes skews less than a ratio of medians; the "
            "middle half of those ratios shows how steady the machine was; × floor is the same for the "
            "function's time over its floor's. " + self.bytecode,
            "",
            "**Without bytecode.** `sam build` (aws-lambda-builders) unpacks the layer's wheels and copies "
            "shared/ without compiling either, and Lambda's /opt is read-only, so unless the build adds "
            "`.pyc` files every cold start also compiles each imported module. Compiling the imported "
            "modules from outside the standard library costs:",
            "",
            table(
                ["import", "modules compiled", "compile ms", "import without .pyc ≈ ms"],
                [
                    [m.target.label, m.compiled_modules, ms(m.compile_seconds), ms(m.median + m.compile_seconds)]
                    for m in [self.baseline, *self.functions]
                ],
                "lrrr",
            ),
        ]
        for m in self.functions:
            parts += [
                "",
                f"Where {m.target.label} spends beyond the baseline (`python -X importtime` self time, "
                "summed per package, median of 3 runs):",
                "",
                table(["imported", "ms"], [[f"`{name}`", f"{cost:.1f}"] for name, cost in m.heaviest], "lr"),
            ]
        return "\n".join(parts)


def _environment() -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE is set on these machines; left on, a module missing its .pyc would be
    # compiled on every run instead of once by the warm-up.
    inherited = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return inherited | LAMBDA_ENVIRONMENT


def _run(code: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-c", code],
        env=_environment(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _timed(target: Target) -> float:
    done = _run(_TIMED.format(paths=list(target.paths), statement=target.statement))
    if done.returncode:
        lines = done.stderr.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit status {done.returncode}")
    return float(json.loads(done.stdout)["seconds"])


def _compile_cost(target: Target) -> tuple[float, int]:
    roots = [*site.getsitepackages(), str(ROOT)]
    runs = []
    for _ in range(3):
        done = _run(_COMPILE_COST.format(paths=list(target.paths), statement=target.statement, roots=roots))
        done.check_returncode()
        runs.append(json.loads(done.stdout))
    return statistics.median(r["seconds"] for r in runs), int(runs[0]["modules"])


def _package(module: str) -> str:
    parts = module.split(".")
    depth = 3 if parts[0] in ("aws_lambda_powertools", "shopfeed") else 1
    return ".".join(parts[:depth])


def _heaviest(target: Target, top: int = 8) -> list[tuple[str, float]]:
    """Self time of what ``target`` imports beyond the baseline, summed per package (ms)."""
    runs: list[dict[str, float]] = []
    for _ in range(3):
        code = _PROFILED.format(
            paths=list(target.paths), baseline=BASELINE, mark=_PROFILE_MARK, statement=target.statement
        )
        done = _run(code, "-X", "importtime")
        done.check_returncode()
        packages: dict[str, float] = defaultdict(float)
        for line in done.stderr.split(_PROFILE_MARK, 1)[1].splitlines():
            match = _IMPORTTIME_LINE.match(line)
            if match:
                packages[_package(match.group(3))] += int(match.group(1)) / 1000
        runs.append(packages)
    names = {name for packages in runs for name in packages}
    medians = {name: statistics.median(packages.get(name, 0.0) for packages in runs) for name in names}
    return sorted(medians.items(), key=lambda item: item[1], reverse=True)[:top]


def compile_bytecode() -> str:
    """Compile the layer and the functions, as uv compiled the venv's packages at install."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(SHARED), str(FUNCTIONS)],
        cwd=ROOT,
        env=_environment(),
        check=True,
    )
    return (
        "Bytecode: `python -m compileall -q shared functions` ran first, site-packages were compiled by "
        "uv at install (`UV_COMPILE_BYTECODE=1`), and every interpreter ran with PYTHONDONTWRITEBYTECODE "
        "unset after an unmeasured warm-up, so each import reads `.pyc` files."
    )


def floors() -> dict[str, str]:
    """Each function directory's floor, from the events template.yaml gives it: HTTP routes the HTTP
    resolver, stream or queue records the BatchProcessor, anything else (schedules, Cognito) Logger + Metrics."""
    template = cfn.load()
    found = {}
    for name in cfn.resources("AWS::Serverless::Function"):
        props = cfn.function_properties(name, template)
        kinds = {event["Type"] for event in (props.get("Events") or {}).values()}
        floor = LOGGER_AND_METRICS
        if kinds & {"HttpApi", "Api"} or "FunctionUrlConfig" in props:
            floor = HTTP_RESOLVER
        elif kinds & {"DynamoDB", "SQS", "Kinesis"}:
            floor = BATCH_PROCESSOR
        found[Path(props["CodeUri"]).name] = floor
    return found


def function_targets() -> list[Target]:
    """Every ``functions/*/app.py`` present now, imported as Lambda does (handler module ``app``)."""
    kinds = floors()
    return [
        Target(
            f"`functions/{app.parent.name}/app.py`",
            "import app",
            (str(app.parent), str(SHARED)),
            kinds.get(app.parent.name, LOGGER_AND_METRICS),
        )
        for app in sorted(FUNCTIONS.glob("*/app.py"))
    ]


def measure(runs: int = 9) -> ColdStart:
    bytecode = compile_bytecode()
    baseline = Target(f"`{BASELINE}` (baseline)", BASELINE)
    references = [Target(label, statement) for label, statement in REFERENCES.items()]
    for target in [baseline, *references]:
        _timed(target)  # warm-up
    functions: list[Target] = []
    broken: dict[str, str] = {}
    for target in function_targets():
        try:
            _timed(target)  # warm-up, and proof that it imports at all
        except RuntimeError as error:
            broken[target.label] = str(error)
            continue
        functions.append(target)
    targets = [baseline, *references, *functions]
    measured = {target: Measured(target) for target in targets}
    by_label = {target.label: target for target in references}
    for _ in range(runs):
        seconds = {target: _timed(target) for target in targets}
        for target, elapsed in seconds.items():
            measured[target].samples.append(elapsed)
            measured[target].ratios.append(elapsed / seconds[baseline])
            if target.floor is not None:
                measured[target].over_floor.append(elapsed / seconds[by_label[target.floor]])
    for target in [baseline, *functions]:
        measured[target].compile_seconds, measured[target].compiled_modules = _compile_cost(target)
    for target in functions:
        measured[target].heaviest = _heaviest(target)
    return ColdStart(
        baseline=measured[baseline],
        references=[measured[t] for t in references],
        functions=[measured[t] for t in functions],
        broken=broken,
        runs=runs,
        bytecode=bytecode,
    )
