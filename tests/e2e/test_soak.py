"""The soak: a stack whose every AWS call fails at 5 %, mixed traffic from several clients, then the
ledger checked against the tables (local/harness/soak.py says what is checked).

Its own stack and xdist group, so it overlaps the other e2e tests; it prints its figures (pytest -s, or
the summary on failure). docs/reliability.md keeps the figures of a run.
"""

from collections.abc import Iterator

import pytest

from local.harness import soak
from tests.e2e.conftest import LocalStack, running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("soak")]

FAULT_RATE = 0.05
SECONDS = 60
CLIENTS = 4


@pytest.fixture(scope="module")
def faulty_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with running_stack(
        tmp_path_factory.mktemp("soaked-stack"), "--faults", str(FAULT_RATE), "--fault-seed", "7"
    ) as stack:
        yield stack


def test_a_minute_of_mixed_traffic_with_5_percent_of_aws_calls_failing_loses_and_doubles_nothing(
    faulty_stack: LocalStack, capsys: pytest.CaptureFixture[str]
) -> None:
    # when several clients write for a minute, retrying 503s with their keys
    figures = soak.run(faulty_stack.url, faulty_stack.token, clients=CLIENTS, seconds=SECONDS, seed=7)
    figures.faults = faulty_stack.page().get("faults", {})
    with capsys.disabled():
        print("\n" + figures.summary())
    # then faults were injected and absorbed: no 500, nothing unresolved, and the ledger holds
    assert figures.faults["faults"] > 0, "the stack injected no fault"
    assert figures.server_errors == 0, figures.summary()
    assert figures.unresolved == [], figures.summary()
    assert figures.without_retry_after == 0, figures.summary()
    assert figures.mismatches == [], figures.summary()
    assert sum(figures.writes.values()) > 0
