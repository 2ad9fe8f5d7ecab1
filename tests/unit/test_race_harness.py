"""The race harness waits for containers as long as they live, and fails on one that died silently."""

from dataclasses import dataclass

import pytest

from local.harness import race


@dataclass
class _Container:
    exitcode: int | None


def test_a_slow_container_still_running_is_waited_for() -> None:
    gone = race._fail_if_gone([_Container(None), _Container(0)], {1: []}, set(), deadline=float("inf"))

    assert gone == set()


def test_a_container_gone_without_answering_gets_one_more_poll_then_fails() -> None:
    containers = [_Container(None), _Container(-9)]

    gone = race._fail_if_gone(containers, {}, set(), deadline=float("inf"))
    assert gone == {1}
    with pytest.raises(AssertionError, match=r"containers \[1\] exited without answering"):
        race._fail_if_gone(containers, {}, gone, deadline=float("inf"))


def test_a_container_still_running_past_the_deadline_fails() -> None:
    with pytest.raises(AssertionError, match="1 containers still running"):
        race._fail_if_gone([_Container(None)], {}, set(), deadline=0.0)
