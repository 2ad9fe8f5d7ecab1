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


@pytest.mark.parametrize("source", sorted(PLATFORM.rglob("*.py")), ids=lambda p: str(p.relative_to(PLATFORM)))
def test_the_platform_imports_no_context(source: Path) -> None:
    contexts = [m for m in imported_modules(source) if m.split(".")[:2] in (["shopfeed", c] for c in CONTEXTS)]
    assert contexts == []


@pytest.mark.parametrize("source", sorted(PLATFORM.rglob("*.py")), ids=lambda p: str(p.relative_to(PLATFORM)))
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


# -- contexts keep to themselves ---------------------------------------------------------------------

SHARED = ROOT / "shared" / "shopfeed"
# What a context lets another package import: its models, the module of operations it exposes for the
# user routes to compose, and its search index's mapping for the search sync worker. Everything else
# (keys, items, repositories, services) is its own.
EXPOSED: dict[str, frozenset[str]] = {
    "commerce": frozenset(
        {"shopfeed.commerce.models", "shopfeed.commerce.customers", "shopfeed.commerce.catalog.search.PRODUCTS"}
    ),
    "feed": frozenset({"shopfeed.feed.models", "shopfeed.feed.profiles", "shopfeed.feed.posts.search.POSTS"}),
}
# The packages that compose the contexts: the user routes (accounts), the search sync worker (indexing).
COMPOSERS = ("accounts", "indexing")


def imported_names(source: Path) -> set[str]:
    """Every dotted name ``source`` imports: ``from a.b import c`` is ``a.b.c`` (c may be a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def foreign_imports(source: Path, package: str) -> list[str]:
    """What ``source`` (in context ``package``) imports of another context and may not: commerce and the
    feed nothing of each other; accounts only what a context exposes."""
    refused = []
    for name in sorted(imported_names(source)):
        parts = name.split(".")
        if parts[0] != "shopfeed" or parts[1] in ("platform", package):
            continue
        exposed = EXPOSED.get(parts[1], frozenset()) if package not in EXPOSED else frozenset()
        if not any(name == module or name.startswith(module + ".") for module in exposed):
            refused.append(name)
    return refused


def python_files(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*.py"))


@pytest.mark.parametrize(
    "source", python_files(SHARED / "commerce", SHARED / "feed"), ids=lambda p: str(p.relative_to(SHARED))
)
def test_commerce_and_the_feed_never_import_each_other(source: Path) -> None:
    package = source.relative_to(SHARED).parts[0]
    assert foreign_imports(source, package) == []


@pytest.mark.parametrize(
    "source", python_files(*(SHARED / name for name in COMPOSERS)), ids=lambda p: str(p.relative_to(SHARED))
)
def test_a_composing_package_imports_only_what_the_contexts_expose(source: Path) -> None:
    assert foreign_imports(source, source.relative_to(SHARED).parts[0]) == []


@pytest.mark.parametrize(
    ("package", "line", "refused"),
    [
        ("feed", "from shopfeed.commerce import keys", True),
        ("commerce", "from shopfeed.feed.models import Profile", True),
        ("accounts", "from shopfeed.commerce import items", True),
        ("accounts", "from shopfeed.feed.keys import profile", True),
        ("accounts", "from shopfeed.commerce.customers import registration", False),
        ("indexing", "from shopfeed.feed.posts.search import POSTS", False),
        ("indexing", "from shopfeed.feed.posts.search import post_document", True),
        ("feed", "from shopfeed.platform import dynamo", False),
    ],
)
def test_a_deliberate_violation_is_caught(tmp_path: Path, package: str, line: str, refused: bool) -> None:
    source = tmp_path / "module.py"
    source.write_text(line + "\n")
    assert bool(foreign_imports(source, package)) is refused


# -- the local stack and the benchmarks import no test code -------------------------------------------


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
