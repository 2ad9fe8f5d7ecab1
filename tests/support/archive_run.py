"""One archive run in a process of its own, as a Lambda container runs it: ``python -m
tests.support.archive_run <seconds>`` invokes the archiver's handler with that much time left,
counting down, against whatever the environment points at. The real-kill test SIGKILLs it mid-run."""

import json
import sys
import time

from functions.order_archiver.app import lambda_handler
from local.harness.apigw import sample
from tests.support.archive import ScheduledContext


def main(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    context = ScheduledContext(remaining_ms=lambda: max(0, int((deadline - time.monotonic()) * 1000)))
    print(json.dumps(lambda_handler(sample("schedules/order_archive.json"), context)), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]))
