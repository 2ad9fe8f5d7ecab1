"""How the packages depend on each other: the platform knows no context, entry points stay thin."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "shared" / "shopfeed" / "platform"
CONTEXTS = sorted(
    p.name for p in (ROOT / "shared" / "shopfeed").iterdir() if p.is_dir() and p.name not in ("platform", "__pycache__")
)
ENTRY_POINTS = sorted((ROOT / "functions").glob("*/app.py"))


def imported_modules(source: Path) -> set[str]:
    tree = ast.parse(source.read_text())
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


def test_there_is_a_context_besides_the_platform() -> None:
    assert "commerce" in CONTEXTS


@pytest.mark.parametrize("source", sorted(PLATFORM.glob("*.py")), ids=lambda p: p.name)
def test_the_platform_imports_no_context(source: Path) -> None:
    contexts = [m for m in imported_modules(source) if m.split(".")[:2] in (["shopfeed", c] for c in CONTEXTS)]
    assert contexts == []


@pytest.mark.parametrize("source", sorted(PLATFORM.glob("*.py")), ids=lambda p: p.name)
def test_the_platform_names_no_context(source: Path) -> None:
    # The context's package name as a word, in code or prose (the project's own name, shopfeed, is not
    # the feed context): the platform's examples use neutral names.
    named = [c for c in CONTEXTS if re.search(rf"\b{c}\b", source.read_text(), re.IGNORECASE)]
    assert named == []


@pytest.mark.parametrize("entry_point", ENTRY_POINTS, ids=lambda p: p.parent.name)
def test_an_entry_point_only_wires_its_context(entry_point: Path) -> None:
    # A handler module routes; rules, ports and record handlers live in the context's package.
    lines = [line for line in entry_point.read_text().splitlines() if line.strip()]
    assert len(lines) <= 30, f"{entry_point.parent.name}/app.py has {len(lines)} non-blank lines"
    assert not any(m.startswith(("boto3", "botocore", "os")) for m in imported_modules(entry_point))


# -- the local stack and the benchmarks import no test code -------------------------------------------


def python_files(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*.py"))


def imported_test_code(source: Path) -> list[str]:
    """What ``source`` imports of the tests (``tests`` or below): the tests may import ``local``, not
    the other way round."""
    return sorted(m for m in imported_modules(source) if m == "tests" or m.startswith("tests."))


@pytest.mark.parametrize("source", python_files(ROOT / "local", ROOT / "bench"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_local_stack_and_the_benchmarks_import_no_test_code(source: Path) -> None:
    assert not imported_test_code(source)


@pytest.mark.parametrize(
    ("line", "refused"),
    [
        ("from tests.support.x import helper", True),
        ("import tests.support.x", True),
        ("from tests import support", True),
        ("from testsuite import helper", False),
        ("from local.harness.client import ApiClient", False),
    ],
)
def test_a_test_import_in_the_local_stack_is_caught(tmp_path: Path, line: str, refused: bool) -> None:
    source = tmp_path / "module.py"
    source.write_text(line + "\n")
    assert bool(imported_test_code(source)) is refused
