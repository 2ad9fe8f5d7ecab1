"""Scheduled functions: the template's schedules, run on demand with the event their scheduler sends."""

from typing import Any

import pytest

from local import cfn
from local.lambdas import LocalFunction
from local.schedules import Schedule, Scheduler


class Recorder:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def __call__(self, event: Any, context: Any) -> dict[str, int]:
        self.events.append(event)
        return {"swept": 0}


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def sweeper_schedule(recorder: Recorder) -> Schedule:
    props = cfn.load()["Resources"]["OutboxSweeperFunction"]["Properties"]["Events"]["Sweep"]
    return Schedule.from_event(
        LocalFunction("OutboxSweeperFunction", recorder), "Sweep", props["Type"], props["Properties"]
    )


def test_the_sweepers_schedule_is_read_from_the_template(recorder: Recorder) -> None:
    schedule = sweeper_schedule(recorder)
    assert (schedule.kind, schedule.rate_s, schedule.retries) == ("ScheduleV2", 300, 2)


def test_running_a_schedule_on_demand_invokes_its_function_with_the_schedulers_event(recorder: Recorder) -> None:
    # given the sweeper's schedule
    scheduler = Scheduler([sweeper_schedule(recorder)])

    # when it is run on demand
    result = scheduler.run_now("OutboxSweeperFunction")

    # then the function got EventBridge Scheduler's default notification, once
    assert result.payload == {"swept": 0}
    (event,) = recorder.events
    assert event["source"] == "aws.scheduler"
    assert event["detail-type"] == "Scheduled Event"
    assert event["resources"][0].startswith("arn:aws:scheduler:us-east-1:123456789012:schedule/default/")


def test_a_schedule_with_input_sends_that_input(recorder: Recorder) -> None:
    # given a cron schedule with its own input
    function = LocalFunction("Job", recorder)
    schedule = Schedule.from_event(
        function, "Nightly", "Schedule", {"ScheduleExpression": "cron(0 3 * * ? *)", "Input": '{"full": true}'}
    )

    # when it is run on demand
    Scheduler([schedule]).run_now("Job")

    # then the function got that input
    assert recorder.events == [{"full": True}]
    assert schedule.rate_s is None  # cron schedules run on demand only


@pytest.mark.parametrize(
    ("expression", "seconds"),
    [("rate(1 minute)", 60), ("rate(5 minutes)", 300), ("rate(2 hours)", 7200), ("rate(1 day)", 86400)],
)
def test_rate_expressions_give_their_period(recorder: Recorder, expression: str, seconds: int) -> None:
    schedule = Schedule.from_event(
        LocalFunction("Job", recorder), "Tick", "ScheduleV2", {"ScheduleExpression": expression}
    )
    assert schedule.rate_s == seconds
