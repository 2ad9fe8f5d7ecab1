"""``make load``'s mix: its routes are the API's (no drift from docs/openapi.json), its answers are judged as
the report says, its report reads Locust's CSV, and its locustfile loads in Locust's own environment."""

import base64
import json
import subprocess
from pathlib import Path

import pytest

from bench.load import mix
from bench.load.__main__ import LOCUST, LOCUSTFILE
from bench.load.report import SECTION, Report, section_of, with_section
from local.cfn import ROOT

COMMITTED = json.loads((ROOT / "docs" / "openapi.json").read_text())
OPERATIONS = {f"{method.upper()} {path}" for path, ops in COMMITTED["paths"].items() for method in ops}
# Locust's CSV headers (2.47.0): the columns the report reads, among the others.
STATS_HEADER = (
    "Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response Time,"
    "Max Response Time,Average Content Size,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,"
    "99.99%,100%"
)
FAILURES_HEADER = "Method,Name,Error,Occurrences"


@pytest.mark.parametrize("route", [*mix.ROUTES, mix.CREATE_PRODUCT])
def test_every_route_of_the_mix_is_an_operation_of_the_openapi_document(route: str) -> None:
    assert route in OPERATIONS


def test_every_weighted_action_is_a_route_the_report_expects() -> None:
    assert set(mix.WEIGHTS) <= set(mix.ROUTES)
    assert all(weight > 0 for weight in mix.WEIGHTS.values())
    assert mix.WEIGHTS[mix.PAY_ORDER] <= mix.WEIGHTS[mix.PLACE_ORDER]


# (route, status) pairs by the verdict they get; 0 is Locust's status of a dropped connection (no answer).
VERDICTS = {
    mix.OK: [(mix.PLACE_ORDER, 201), (mix.PAY_ORDER, 202), (mix.LIKE, 204)],
    mix.REFUSED: [(mix.PLACE_ORDER, 409), (mix.REGISTER, 409), (mix.HOME_FEED, 429)],
    mix.ERROR: [
        *[(mix.PAY_ORDER, 409), (mix.FOLLOW, 400), (mix.GET_PRODUCT, 404), (mix.HOME_FEED, 401)],
        *[(mix.PLACE_ORDER, 500), (mix.HOME_FEED, 503), (mix.HOME_FEED, 302), (mix.HOME_FEED, 0)],
    ],
}


@pytest.mark.parametrize(
    ("route", "status", "verdict"),
    [(route, status, verdict) for verdict, pairs in VERDICTS.items() for route, status in pairs],
)
def test_an_answer_is_ok_an_expected_refusal_or_an_error(route: str, status: int, verdict: str) -> None:
    assert mix.judge(route, status) == verdict


def test_a_path_is_its_route_template_filled_with_escaped_parameters() -> None:
    assert mix.path(mix.FOLLOW, user_id="U 1/2") == "/users/U%201%2F2/followers/me"
    assert mix.method(mix.FOLLOW) == "PUT"


def test_the_subject_of_a_token_is_read_from_its_payload() -> None:
    payload = base64.urlsafe_b64encode(json.dumps({"sub": "U-9", "aud": "x"}).encode()).rstrip(b"=").decode()
    assert mix.subject(f"header.{payload}.signature") == "U-9"


def _csv(tmp_path: Path, stats: list[str], failures: list[str]) -> Path:
    prefix = tmp_path / "load"
    Path(f"{prefix}_stats.csv").write_text("\n".join([STATS_HEADER, *stats]) + "\n")
    Path(f"{prefix}_failures.csv").write_text("\n".join([FAILURES_HEADER, *failures]) + "\n")
    return prefix


def _row(kind: str, name: str, requests: int, failures: int) -> str:
    return f"{kind},{name},{requests},{failures},40,50,5,900,120,2.5,0.0,40,45,50,55,60,70,80,90,900,900,900"


def test_the_report_has_a_line_per_route_refusals_apart_and_errors_by_cause(tmp_path: Path) -> None:
    # given Locust's CSV of a run in which every route answered, one order was refused and one failed
    refusal = mix.refusal_name(mix.PLACE_ORDER, 409, "Insufficient stock")
    rows = [_row(mix.method(r), r, 10, int(r == mix.PAY_ORDER)) for r in mix.ROUTES]
    prefix = _csv(
        tmp_path,
        [*rows, _row("POST", refusal, 3, 0), _row("", "Aggregated", 10 * len(mix.ROUTES) + 3, 1)],
        [f'POST,{mix.PAY_ORDER},"500 Internal Server Error",1'],
    )
    # when it is read
    report = Report.read(prefix)
    # then each route has its line, the refusal is no route and no error, the error is counted with its cause
    assert report.missing() == []
    assert [line.name for line in report.refusals] == [refusal]
    assert report.errors == 1
    assert report.routes[mix.PAY_ORDER].errors == 1
    assert report.routes[mix.GET_PRODUCT].p99 == "90"
    text = report.markdown()
    assert f"| `{mix.HOME_FEED}` | 10 | 0 | 40 | 70 | 90 | 2.5 |" in text
    assert f"| {refusal} | 3 | 0 |" in text
    assert f"- `{mix.PAY_ORDER}`: 500 Internal Server Error × 1" in text


def test_the_report_names_the_routes_no_request_reached(tmp_path: Path) -> None:
    prefix = _csv(tmp_path, [_row("GET", mix.HOME_FEED, 4, 0), _row("", "Aggregated", 4, 0)], [])
    report = Report.read(prefix)
    assert report.missing() == [route for route in mix.ROUTES if route != mix.HOME_FEED]
    assert "Routes of the mix never reached: POST /users" in report.markdown()


def test_the_locustfile_loads_in_locusts_environment_with_a_task_per_weighted_route() -> None:
    # Locust monkey-patches sockets and threads on import (gevent): it is loaded in its own process and
    # tool environment, never in this one.
    assert LOCUST.is_file(), f"{LOCUST} is missing: run `make deps`"
    listed = subprocess.run(
        [str(LOCUST), "-f", str(LOCUSTFILE), "--list"],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["Available", "Users:", "Shopper"]
    python = LOCUST.resolve().parent / "python"
    weights = subprocess.run(
        [str(python), "-c", "from bench.load.locustfile import Shopper; print(len(Shopper.tasks))"],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    # Locust lists a task once per unit of its weight
    assert int(weights.stdout) == sum(mix.WEIGHTS.values())


def test_the_load_section_is_appended_once_then_replaced_in_place_keeping_the_others() -> None:
    # given a benchmarks report without the load test's section
    report = "# benchmarks\n\n## Cold start\n\nfigures\n"
    # when a run writes it, then a second run
    first = with_section(report, f"{SECTION}\n\nrun 1\n")
    second = with_section(first + "\n## Later section\n\nmore\n", f"{SECTION}\n\nrun 2\n")
    # then the first appended it, the second replaced it and kept what follows
    assert first == f"{report}\n{SECTION}\n\nrun 1\n"
    assert second.count(SECTION) == 1
    assert "run 1" not in second
    assert second.endswith(f"{SECTION}\n\nrun 2\n\n## Later section\n\nmore\n")
    assert section_of(second) == f"{SECTION}\n\nrun 2\n"
    assert section_of(report) == ""
