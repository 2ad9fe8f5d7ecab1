"""The soak: a stack whose every AWS call fails at 5 %, mixed traffic from several clients, then the
ledger checked against the tables (local/harness/soak.py says what is checked).

It shares the faulted stack of test_faults.py (conftest.py: 5 % of every function's AWS call attempts
fail) and its xdist group, so it overlaps the other e2e tests. It prints its figures;
docs/reliability.md keeps those of a run.
"""

import pytest

from local.harness import soak
from tests.e2e.conftest import LocalStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("faults")]

SECONDS = 60
CLIENTS = 4


def test_a_minute_of_mixed_traffic_with_5_percent_of_aws_calls_failing_loses_and_doubles_nothing(
    faulted_stack: LocalStack, capsys: pytest.CaptureFixture[str]
) -> None:
    # when several clients write for a minute, retrying 503s with their keys
    figures = soak.run(faulted_stack.url, faulted_stack.token, clients=CLIENTS, seconds=SECONDS, seed=7)
    figures.faults = faulted_stack.page().get("faults", {})
    with capsys.disabled():
        print("\n" + figures.summary())
    # then faults were injected and absorbed: no 500, nothing unresolved, and the ledger holds
    assert figures.faults["faults"] > 0, "the stack injected no fault"
    assert figures.server_errors == 0, figures.summary()
    assert figures.unresolved == [], figures.summary()
    assert figures.without_retry_after == 0, figures.summary()
    assert figures.mismatches == [], figures.summary()
    assert sum(figures.writes.values()) > 0
