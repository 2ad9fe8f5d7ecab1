"""The GitHub workflows shipped for those who copy the project: what they run and what they read."""

import re
from typing import Any

import yaml

from local.cfn import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"


def load(name: str) -> dict[str, Any]:
    # PyYAML reads the key `on` as True (YAML 1.1); nothing here looks at it.
    return dict(yaml.safe_load((WORKFLOWS / name).read_text()))


def test_every_variable_and_secret_the_workflows_read_is_documented() -> None:
    # given what the workflows read from the repository's settings
    read = set()
    for workflow in WORKFLOWS.glob("*.yml"):
        read |= set(re.findall(r"\$\{\{\s*(vars|secrets)\.([A-Z0-9_]+)", workflow.read_text()))

    # then each is in the pipeline's set-up table, and none is a secret (OIDC, no keys)
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert read, "the workflows read no variable at all"
    assert {kind for kind, _ in read} == {"vars"}
    assert [name for _, name in read if f"| `{name}` |" not in operations] == []


def test_checks_run_the_commands_of_the_readme() -> None:
    steps = [step.get("run") for job in load("checks.yml")["jobs"].values() for step in job["steps"]]
    assert {"make lint", "make test"} <= set(steps)
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme


def test_main_deploys_one_build_to_dev_then_to_prod_behind_its_environment_with_oidc() -> None:
    jobs = load("release.yml")["jobs"]
    assert jobs["build"]["needs"] == "checks"
    assert jobs["deploy-dev"]["needs"] == "build"
    assert jobs["deploy-prod"]["needs"] == "deploy-dev"
    for stage in ("dev", "prod"):
        job = jobs[f"deploy-{stage}"]
        assert job["environment"] == stage
        assert job["permissions"]["id-token"] == "write"
        runs = [step.get("run", "") for step in job["steps"]]
        assert any(run.startswith(f"make deploy-built ENV={stage} ") for run in runs), runs
        uses = [step.get("uses", "") for step in job["steps"]]
        assert any(u.startswith("actions/download-artifact") for u in uses)  # the build of the build job
        assert not any("aws-access-key-id" in str(step.get("with", {})) for step in job["steps"])
