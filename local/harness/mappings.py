"""Every event source mapping of template.yaml, run in this process: what ``make dev`` runs in worker
processes and poller threads, driven here one round at a time, against whatever AWS the shared
clients point at (moto's mock in the integration tier).

``provision`` makes the template's resources as the local stack does (queues with their redrive
policies, the bus and its rules, the bucket, the secret; existing tables are reused). Each function
with a stream or queue mapping is its handler module imported here (``LocalFunction``), behind the
local stack's own pollers with the mapping's settings; a stream poller reports what it discards to
the mapping's OnFailure queue. The functions share this process, so ``environment`` is the union of
what their template entries declare: set it before the first round.

Two things follow a test's pace, not the template's: batching windows close at once, and a failing
stream batch is retried at once, so a mapping's retry budget (MaximumRetryAttempts) is spent in
milliseconds. Queue time is moto's own: a test that lets it pass (``tests.support.queue_time``)
waits out visibility timeouts in no time.
"""

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from local import cfn
from local.engines import REGION
from local.lambdas import LocalFunction
from local.provision import Provisioned, function_environment, provision
from local.queues import QueuePoller, QueueSettings
from local.streams import SqsDestination, StreamPoller, StreamSettings

Poller = StreamPoller | QueuePoller


@dataclass
class _ThisProcess:
    """The AWS of the shared clients (``provision``'s engines): moto's mock when a test started it."""

    search_endpoint: str | None = None

    def client(self, service: str) -> Any:
        # botocore routes DynamoDB Streams to an account-id host that moto's mock does not recognise.
        return boto3.client(service, region_name=REGION, config=Config(account_id_endpoint_mode="disabled"))  # type: ignore[call-overload]


@dataclass
class Mappings:
    """The template's mappings, their pollers, and the queues their failures end in."""

    provisioned: Provisioned
    environment: dict[str, str]
    pollers: dict[str, Poller] = field(default_factory=dict)  # by "<function> <- <source>"

    def run(self, rounds: int = 1000) -> int:
        """Poll every mapping until a round moves nothing; the rounds taken. Bounded: mappings that
        never settle fail the test instead of hanging it."""
        for done in range(rounds):
            if not sum(self._poll(poller) for poller in self.pollers.values()):
                return done
        raise AssertionError(f"the template's mappings still had work after {rounds} rounds")

    @staticmethod
    def _poll(poller: Poller) -> int:
        return poller.poll() if isinstance(poller, StreamPoller) else poller.poll(0)

    def dead_letter_queues(self) -> list[str]:
        """Every queue failures end in: the streams' OnFailure destinations, the queues' redrive targets."""
        resources = cfn.load()["Resources"]
        targets = set()
        for name in self.provisioned.kinds:
            props = resources[name].get("Properties") or {}
            targets |= cfn.references((props.get("RedrivePolicy") or {}).get("deadLetterTargetArn"))
        for function in cfn.resources("AWS::Serverless::Function"):
            for event in (cfn.function_properties(function).get("Events") or {}).values():
                on_failure = (event["Properties"].get("DestinationConfig") or {}).get("OnFailure") or {}
                targets |= cfn.references(on_failure.get("Destination"))
        return sorted(targets & set(self.provisioned.kinds))

    def depth(self, queue: str) -> int:
        """Messages on a template queue, visible or in flight."""
        url = self.provisioned.resolver.attributes[(queue, "QueueUrl")]
        attributes = (
            _ThisProcess()
            .client("sqs")
            .get_queue_attributes(
                QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
            )["Attributes"]
        )
        return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


def start(parameters: Mapping[str, Any], state_dir: Path) -> Mappings:
    """Provision the template with ``parameters`` (``state_dir`` keeps its generated secret) and build a
    poller per stream and queue mapping."""
    aws = _ThisProcess()
    template = cfn.load()
    provisioned = provision(template, aws, state_dir, parameters)
    mappings = Mappings(provisioned, {})
    for function, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function" or function not in provisioned.resolver.refs:
            continue
        properties = cfn.function_properties(function, template)
        events = {
            name: provisioned.resolver.resolve(event.get("Properties") or {})
            for name, event in (properties.get("Events") or {}).items()
            if event["Type"] in ("DynamoDB", "SQS")
        }
        if not events:
            continue
        _add_environment(mappings.environment, function_environment(provisioned, properties), function)
        handler = importlib.import_module(cfn.handler_module(function, template)).lambda_handler
        lambda_function = LocalFunction(function, handler, timeout_s=float(properties["Timeout"]))
        for props in events.values():
            source = props.get("Stream") or props["Queue"]
            label = f"{function} <- {provisioned.logical_id_of(source) or source}"
            mappings.pollers[label] = _poller(lambda_function, props, provisioned, aws)
    return mappings


def _add_environment(environment: dict[str, str], variables: Mapping[str, str], function: str) -> None:
    for name, value in variables.items():
        if environment.setdefault(name, value) != value:
            raise ValueError(f"{function} sets {name} to {value!r}, another consumer to {environment[name]!r}")


def _poller(function: LocalFunction, props: Mapping[str, Any], provisioned: Provisioned, aws: _ThisProcess) -> Poller:
    if "Stream" in props:
        settings = replace(StreamSettings.from_event(props), batching_window_s=0.0)
        destination = None
        if settings.on_failure:
            queue = provisioned.logical_id_of(settings.on_failure) or settings.on_failure
            destination = SqsDestination(aws.client("sqs"), provisioned.queue_url(settings.on_failure), queue)
        return StreamPoller(
            function=function,
            stream_arn=props["Stream"],
            settings=settings,
            streams=aws.client("dynamodbstreams"),
            destination=destination,
            retry_backoff_s=(0.0,),
        )
    return QueuePoller(
        function=function,
        queue_url=provisioned.queue_url(props["Queue"]),
        queue_arn=props["Queue"],
        settings=replace(QueueSettings.from_event(props), batching_window_s=0.0),
        sqs=aws.client("sqs"),
    )
