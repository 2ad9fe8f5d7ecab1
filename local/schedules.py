"""Scheduled functions (SAM ``Schedule`` and ``ScheduleV2`` events), run on demand or on their rate.

Locally a schedule runs when asked (``POST /__local/schedules/<FunctionLogicalId>``) and, with
``--schedules``, every ``rate(...)`` of the template too; ``cron(...)`` expressions only run on
demand. The event is the one the scheduler would send: EventBridge's "Scheduled Event" for
``Schedule``, Scheduler's default notification for ``ScheduleV2``, or the event's ``Input``.
"""

import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from local.lambdas import Function, Invocation

log = logging.getLogger("local.schedules")

_RATE = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_UNIT_S = {"minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True)
class Schedule:
    """One schedule event of a function."""

    function: Function
    name: str
    kind: str  # Schedule (EventBridge rule) or ScheduleV2 (EventBridge Scheduler)
    expression: str
    input: str | None = None
    retries: int = 0
    enabled: bool = True

    @classmethod
    def from_event(cls, function: Function, name: str, kind: str, props: Mapping[str, Any]) -> "Schedule":
        """From the resolved ``Properties`` of a SAM ``Schedule``/``ScheduleV2`` event."""
        retry_policy = props.get("RetryPolicy") or {}
        state = str(props.get("State", "ENABLED")).upper()
        return cls(
            function=function,
            name=name,
            kind=kind,
            expression=str(props["ScheduleExpression"]),
            input=props.get("Input"),
            retries=int(retry_policy.get("MaximumRetryAttempts", 0 if kind == "Schedule" else 185)),
            enabled=bool(props.get("Enabled", True)) and state != "DISABLED",
        )

    @property
    def rate_s(self) -> int | None:
        """The period of a ``rate(...)`` expression in seconds; None for ``cron(...)``."""
        match = _RATE.match(self.expression.strip())
        return int(match.group(1)) * _UNIT_S[match.group(2).rstrip("s")] if match else None

    def event(self, now: float | None = None) -> Any:
        moment = datetime.fromtimestamp(time.time() if now is None else now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if self.input is not None:
            return json.loads(self.input)
        fn = self.function
        if self.kind == "ScheduleV2":
            return {
                "version": "0",
                "id": str(uuid.uuid4()),
                "detail-type": "Scheduled Event",
                "source": "aws.scheduler",
                "account": fn.account,
                "time": moment,
                "region": fn.region,
                "resources": [f"arn:aws:scheduler:{fn.region}:{fn.account}:schedule/default/{fn.name}{self.name}"],
                "detail": "{}",  # Scheduler's default notification carries the detail as a string
            }
        return {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": fn.account,
            "time": moment,
            "region": fn.region,
            "resources": [f"arn:aws:events:{fn.region}:{fn.account}:rule/{fn.name}{self.name}"],
            "detail": {},
        }


class Scheduler:
    """Runs the template's schedules: ``run_now`` on demand, ``run`` on their rates."""

    def __init__(self, schedules: list[Schedule], stop: threading.Event | None = None) -> None:
        self.schedules = schedules
        self._stop = stop or threading.Event()

    @property
    def functions(self) -> list[str]:
        return sorted({s.function.name for s in self.schedules})

    def describe(self) -> list[dict[str, Any]]:
        return [
            {"function": s.function.name, "event": s.name, "type": s.kind, "expression": s.expression}
            for s in self.schedules
        ]

    def run_now(self, function: str) -> Invocation:
        """Invoke ``function`` once with its (first) schedule's event, without retries."""
        schedule = next(s for s in self.schedules if s.function.name == function)
        result = schedule.function.invoke(schedule.event())
        outcome = f"failed ({result.error_type})" if result.failed else "ok"
        log.info("%s (schedule %s, on demand): %s (%.0f ms)", function, schedule.name, outcome, result.duration_ms)
        return result

    def run(self, functions: Collection[str] | None = None) -> None:
        """Invoke each enabled ``rate(...)`` schedule (of ``functions``, or of every function) at its
        period until the stop event is set."""
        due = {
            s: time.monotonic() + s.rate_s
            for s in self.schedules
            if s.enabled and s.rate_s and (functions is None or s.function.name in functions)
        }
        while due and not self._stop.is_set():
            schedule, at = min(due.items(), key=lambda item: item[1])
            if self._stop.wait(max(0.0, at - time.monotonic())):
                return
            for attempt in range(schedule.retries + 1):
                result = schedule.function.invoke(schedule.event())
                log.info(
                    "%s (schedule %s): %s (%.0f ms)",
                    schedule.function.name,
                    schedule.name,
                    f"failed ({result.error_type}), attempt {attempt + 1}" if result.failed else "ok",
                    result.duration_ms,
                )
                if not result.failed or self._stop.wait(min(60.0, 2.0**attempt)):
                    break
            due[schedule] = time.monotonic() + (schedule.rate_s or 0)
