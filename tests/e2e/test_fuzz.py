"""Schemathesis over docs/openapi.json against the local stack, once per role, every check that applies.

What must hold for any input and any identity: no 5xx (ST101), every answer conforms to the document
(status, media type, headers, body schema), schema-valid requests are served and schema-violating ones
refused. The run is bounded (examples per operation, fixed seed) so ``make test`` stays predictable;
tests/e2e/schemathesis.toml says which refusals the schema cannot express, operation by operation.
"""

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local.cfn import ROOT
from tests.e2e.conftest import LocalStack, running_stack

# A group of its own: its stack starts and runs on one worker while the other e2e tests use theirs.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("fuzz")]

SCHEMATHESIS = ROOT / ".tools" / "bin" / "st"  # installed by `make deps`, pinned in the Makefile
CONFIG = Path(__file__).with_name("schemathesis.toml")
MAX_EXAMPLES = 10
SEED = 7

# Each role's token: a customer whose issuer verified their email, another one, an admin and ops.
ROLES: dict[str, tuple[str, tuple[str, ...], dict[str, Any]]] = {
    "user": ("U-FUZZ-USER", (), {"email": "fuzz-user@example.com", "email_verified": True}),
    "other user": ("auth0|fuzz-other", (), {}),
    "admin": ("U-FUZZ-ADMIN", ("admin",), {}),
    "ops": ("U-FUZZ-OPS", ("ops",), {}),
}


def list_operations(document: dict[str, Any]) -> list[str]:
    """The operations that take a ``cursor``: lists, whose cursor any unsigned string makes a 400."""
    return sorted(
        f"{method.upper()} {path}"
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
        if any(p["name"] == "cursor" for p in operation.get("parameters", []))
    )


def config(document: dict[str, Any], written: Path) -> Path:
    """schemathesis.toml plus the list rule, derived from the document (a new list needs no new line)."""
    names = "|".join(re.escape(name) for name in list_operations(document))
    lists = (
        "\n[[operations]]\n"
        f"include-name-regex = {json.dumps(f'^({names})$')}\n"
        'checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]\n'
    )
    written.write_text(CONFIG.read_text() + lists)
    return written


def run_schemathesis(stack: LocalStack, token: str, report: Path) -> dict[str, Any]:
    """The JSON run report of one bounded run with every check, as ``token``."""
    assert SCHEMATHESIS.is_file(), f"{SCHEMATHESIS} is missing: run `make deps`"
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    command = [
        str(SCHEMATHESIS),
        "--config-file",
        str(config(document, report.with_name("schemathesis.toml"))),
        "run",
        str(ROOT / "docs" / "openapi.json"),
        "--url",
        stack.url,
        "--header",
        f"Authorization: Bearer {token}",
        "--checks",
        "all",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--workers",
        "2",
        # Schemathesis gives up on a response after 10 s by default; on two cores shared with the rest of
        # `make test` the stack has answered slower than that (seen: 2 network errors under load 34).
        "--request-timeout",
        "60",
        "--report",
        "json",
        "--report-json-path",
        str(report),
        "--no-color",
    ]
    finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert report.is_file(), f"schemathesis wrote no report:\n{finished.stdout[-4000:]}\n{finished.stderr[-2000:]}"
    document: dict[str, Any] = json.loads(report.read_text())
    document["output"] = finished.stdout
    return document


@pytest.fixture(scope="module")
def fuzzed_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """A stack of the fuzz run's own. Its stateful phase links operations by their parameters (a product
    id listed by one is restocked or edited by the next), so as admin it changes the demo data other
    e2e tests read as the seed made it."""
    with running_stack(tmp_path_factory.mktemp("fuzzed-stack")) as stack:
        yield stack


@pytest.mark.parametrize("role", sorted(ROLES))
def test_schemathesis_finds_no_server_error_and_no_contract_violation(
    fuzzed_stack: LocalStack, tmp_path: Path, role: str
) -> None:
    # given
    subject, groups, claims = ROLES[role]
    token = fuzzed_stack.token(subject, *groups, **claims)

    # when
    report = run_schemathesis(fuzzed_stack, token, tmp_path / "report.json")

    # then
    failures = {f["code"]: f["count"] for f in report["failures"]}
    print(f"schemathesis as {role}: {report['test_cases']['generated']} cases, failures {failures or 'none'}")
    assert report["complete"], report["output"][-4000:]
    assert report["operations"]["tested"] == report["operations"]["total"]
    assert report["test_cases"]["generated"] > 0
    assert failures == {}, report["output"][-8000:]
    assert report["errors"] == [], report["output"][-8000:]


def test_the_list_rule_covers_every_operation_with_a_cursor() -> None:
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    listed = list_operations(document)
    assert "GET /users/{user_id}/comments" in listed
    assert "GET /feed" in listed
    assert all(name.startswith("GET ") for name in listed)
