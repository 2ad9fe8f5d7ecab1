"""`make test` runs with ``--dist loadgroup``: a module marked ``xdist_group`` must run on one worker, so
its session and module fixtures (an e2e stack, a volume module's DynamoDB Local) start once.

pytest-xdist 3.8 under pytest 9.2 split every group over both workers (tests/conftest.py says why);
this runs a small suite the way `make test` does, with the hook tests/conftest.py adds, and checks.
"""

import os
import subprocess
import sys
from pathlib import Path

from local.cfn import ROOT

CONFTEST = """
import os
from pathlib import Path

import pytest

from tests.conftest import pytest_collection_modifyitems  # noqa: F401 - the hook under test


@pytest.fixture(scope="session")
def stack():
    with (Path(__file__).parent / "started").open("a") as started:
        started.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")


@pytest.fixture(autouse=True)
def where(request):
    with (Path(__file__).parent / "ran").open("a") as ran:
        ran.write(f"{request.node.name} {os.environ['PYTEST_XDIST_WORKER']}\\n")
"""

GROUPED = """
import pytest

pytestmark = [pytest.mark.xdist_group("stacked")]


@pytest.mark.parametrize("n", range(6))
def test_grouped(stack, n):
    pass


def test_grouped_too(stack):
    pass
"""

FREE = """
import pytest


@pytest.mark.parametrize("n", range(20))
def test_free(n):
    pass
"""


def run_suite(suite: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """pytest over the small suite in ``suite``, with the project importable, as a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, "."],
        cwd=suite,
        env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'shared'}"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_group_and_its_session_fixture_stay_on_one_worker(tmp_path: Path) -> None:
    # given a group of seven tests using a session fixture, and twenty tests of no group
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "test_free.py").write_text(FREE)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")

    # when they run as `make test` runs its tiers
    finished = run_suite(tmp_path, "-n", "2", "--dist", "loadgroup")

    # then the group ran on one worker, which started the fixture once; the others used both workers
    assert finished.returncode == 0, finished.stdout + finished.stderr
    ran = dict(line.split() for line in (tmp_path / "ran").read_text().splitlines())
    assert len(ran) == 27
    grouped = {worker for name, worker in ran.items() if name.startswith("test_grouped")}
    assert len(grouped) == 1, ran
    assert (tmp_path / "started").read_text().split() == list(grouped)
    assert set(ran.values()) == {"gw0", "gw1"}


def test_the_long_groups_are_handed_out_first_and_the_short_modules_last(tmp_path: Path) -> None:
    # given, in collection order, a module of no group, one that runs a tool, a volume module's group
    # and a stack's group
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_a_free.py").write_text("def test_free_one(): pass\n\ndef test_free_two(): pass\n")
    (tmp_path / "test_a_tool.py").write_text(
        "import pytest\n\n@pytest.mark.tooling\ndef test_tool_one(): pass\n\ndef test_tool_two(): pass\n"
    )
    (tmp_path / "test_b_volume.py").write_text(
        "import pytest\n\npytestmark = [pytest.mark.volume, pytest.mark.xdist_group('engine')]\n\n"
        "def test_volume_one(): pass\n\ndef test_volume_two(): pass\n"
    )
    (tmp_path / "test_c_stack.py").write_text(
        "import pytest\n\npytestmark = [pytest.mark.xdist_group('stack')]\n\n"
        "def test_stack_one(): pass\n\ndef test_stack_two(): pass\n"
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    volume: a volume module\n    tooling: runs a tool\n")

    # when one worker takes the units in the order they are handed out, as `make test` hands them out
    finished = run_suite(tmp_path, "-n", "1", "--dist", "loadgroup", "--no-loadscope-reorder")

    # then the stack's group ran first, the volume module's next, then the tool's module (as a whole),
    # and the module of no group last
    assert finished.returncode == 0, finished.stdout + finished.stderr
    ran = [line.split()[0] for line in (tmp_path / "ran").read_text().splitlines()]
    assert ran == [f"test_{unit}_{n}" for unit in ("stack", "volume", "tool", "free") for n in ("one", "two")]
