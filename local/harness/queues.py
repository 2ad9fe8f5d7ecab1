"""A queue of the template with its dead-letter queue and the worker its SQS mapping feeds, for the moto
and DynamoDB Local tiers and the benchmarks.

The queues are created from template.yaml's properties (redrive policy included), and ``drain``
delivers messages to the worker with the local stack's SQS poller, which follows the template's event
source mapping (batch size, partial batch responses; not its batching window) and deletes what
succeeded, as Lambda does.
"""

import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Self

from local import cfn
from local.lambdas import LocalFunction
from local.queues import QueuePoller, QueueSettings
from shopfeed.platform import clients


def queue_arn(url: str) -> str:
    return clients.sqs().get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def queue_attributes(resolver: cfn.Resolver, logical_id: str) -> dict[Any, str]:
    props = resolver.resolve(cfn.load()["Resources"][logical_id]["Properties"])
    attributes = {k: str(v) for k, v in props.items() if k in ("VisibilityTimeout", "MessageRetentionPeriod")}
    if "RedrivePolicy" in props:
        attributes["RedrivePolicy"] = json.dumps(props["RedrivePolicy"])
    return attributes


@dataclass
class WorkerQueue:
    """A queue, its dead-letter queue and the function reading it (template logical ids)."""

    worker: str
    url: str
    arn: str
    dlq_url: str
    delivered: list[str] = field(default_factory=list)  # every body the worker was handed, in order

    @classmethod
    def of(cls, queue: str, dlq: str, worker: str) -> Self:
        """The template's queues in whatever SQS the shared client points at. The visibility timeout is
        zero here, so a failed message comes back at once instead of after the template's timeout; the
        redrive policy (maxReceiveCount) is the template's."""
        resolver = cfn.Resolver(cfn.load())
        sqs = clients.sqs()
        dlq_url = sqs.create_queue(QueueName=dlq, Attributes=queue_attributes(resolver, dlq))["QueueUrl"]
        resolver.attributes[(dlq, "Arn")] = queue_arn(dlq_url)
        attributes = queue_attributes(resolver, queue) | {"VisibilityTimeout": "0"}
        url = sqs.create_queue(QueueName=queue, Attributes=attributes)["QueueUrl"]
        return cls(worker=worker, url=url, arn=queue_arn(url), dlq_url=dlq_url)

    def poller(self) -> QueuePoller:
        properties = cfn.function_properties(self.worker)
        module = importlib.import_module(str(properties["CodeUri"]).strip("/").replace("/", ".") + ".app")
        (event,) = properties["Events"].values()
        function = LocalFunction(self.worker, self._recording(module.lambda_handler), timeout_s=properties["Timeout"])
        # The batching window closes at once: a test does not wait for it, and with the zero visibility
        # timeout a window would gather the same messages again and again.
        settings = replace(QueueSettings.from_event(event["Properties"]), batching_window_s=0.0)
        return QueuePoller(
            function=function, queue_url=self.url, queue_arn=self.arn, settings=settings, sqs=clients.sqs()
        )

    def _recording(self, handler: Any) -> Any:
        def record(event: dict[str, Any], context: Any) -> Any:
            self.delivered += [r["body"] for r in event["Records"]]
            return handler(event, context)

        return record

    def drain(self, rounds: int = 10_000) -> int:
        """Deliver until the queue is empty (messages the worker puts on it, and failed ones coming back
        until their redrive, included); returns the number of batches. Bounded: a queue that never
        empties fails the test instead of hanging it."""
        poller = self.poller()
        for batches in range(rounds):
            if not poller.poll():
                return batches
        raise AssertionError(f"the queue of {self.worker} was not empty after {rounds} batches")

    def send(self, bodies: Sequence[str]) -> None:
        for body in bodies:
            clients.sqs().send_message(QueueUrl=self.url, MessageBody=body)

    def waiting(self, release: bool = False) -> list[str]:
        """The bodies on the queue, received and hidden for a minute, or made visible again at once
        (``release``): what was queued, read without handing it to the worker."""
        sqs = clients.sqs()
        received: list[Any] = []
        while page := sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10, VisibilityTimeout=60).get(
            "Messages"
        ):
            received += page
        for message in received if release else []:
            sqs.change_message_visibility(
                QueueUrl=self.url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )
        return [m["Body"] for m in received]

    def dead_letters(self) -> list[str]:
        messages = clients.sqs().receive_message(QueueUrl=self.dlq_url, MaxNumberOfMessages=10).get("Messages", [])
        return [m["Body"] for m in messages]
