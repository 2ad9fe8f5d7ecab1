"""Create the template's resources in the local engines, in dependency order, and resolve the rest.

Local physical names are the logical ids, except where the template names a resource itself
(``Name: !Sub shopfeed-${Environment}`` gives the bus ``shopfeed-dev``); bucket names are lower-cased
as S3 requires. After each resource is created its Ref and attributes (Arn, StreamArn, QueueUrl, ...)
are recorded, so later resources and every function's environment resolve to the real local values.
Creating is idempotent: against a persistent engine, existing tables, queues and buses are reused.

Resources without a local meaning (IAM, alarms, log groups, Cognito, queue policies, the layer) are
skipped, and only the properties the local stack uses are resolved: a reference to a skipped resource
is an error only where the local stack needs its value. Secrets are created in the moto server, as in
AWS: a function gets the secret's ARN and reads the value through Secrets Manager. A generated value
is kept in the state directory, so cursors signed before a restart still verify.
"""

import json
import logging
import secrets
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from graphlib import TopologicalSorter
from pathlib import Path
from typing import Any, Protocol

from botocore.exceptions import ClientError

from local import cfn, firehose
from local.engines import REGION

log = logging.getLogger("local.provision")

ACCOUNT = "123456789012"
SECRETS_FILE = "secrets.json"
_QUEUE_ATTRIBUTES = (
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "FifoQueue",
    "ContentBasedDeduplication",
)


class Aws(Protocol):
    """Where the resources are made: the local stack's engines (``local.engines.Engines``), or whatever
    AWS the shared clients point at (moto's mock, ``local.harness.mappings``)."""

    search_endpoint: str | None

    def client(self, service: str) -> Any: ...


@dataclass
class Provisioned:
    """What exists locally: names by logical id, and the resolver that knows their attributes."""

    resolver: cfn.Resolver
    kinds: dict[str, str] = field(default_factory=dict)  # logical id -> resource type, created ones
    names: dict[str, str] = field(default_factory=dict)  # logical id -> local physical name
    deliveries: dict[str, firehose.DeliverySpec] = field(default_factory=dict)  # Firehose streams to S3

    def logical_id_of(self, arn: str) -> str | None:
        """The logical id whose Arn (or StreamArn) is ``arn``."""
        for (logical, attribute), value in self.resolver.attributes.items():
            if value == arn and attribute in ("Arn", "StreamArn"):
                return logical
        return None

    def queue_url(self, arn: str) -> str:
        logical = self.logical_id_of(arn)
        if logical is None or self.kinds.get(logical) != "AWS::SQS::Queue":
            raise KeyError(f"no local queue has the ARN {arn}")
        return str(self.resolver.attributes[(logical, "QueueUrl")])


def provision(
    template: Mapping[str, Any],
    engines: Aws,
    state_dir: Path,
    parameters: Mapping[str, Any] | None = None,
) -> Provisioned:
    """Create every supported resource of ``template`` in ``engines``; returns what was made."""
    resolver = cfn.Resolver(template, parameters=dict(parameters or {}))
    resolver.pseudo |= {"AWS::Region": REGION, "AWS::AccountId": ACCOUNT}
    done = Provisioned(resolver)
    resources = {
        name: resource
        for name, resource in template["Resources"].items()
        if "Condition" not in resource or resolver.condition(resource["Condition"])
    }
    for name, resource in resources.items():
        _predict(done, name, resource["Type"])
    creators = _Creators(engines, done, state_dir, resources)
    # Ordered by what each created resource reads: a deployment-only property may point back at its
    # referrer (a function's DeploymentPreference names the alarms on its own versions).
    order = TopologicalSorter({name: _reads(r) & resources.keys() for name, r in resources.items()})
    for name in order.static_order():
        kind = resources[name]["Type"]
        create = creators.for_type(kind)
        if create is not None:
            try:
                props = resolver.resolve_keys(resources[name].get("Properties") or {}, _PROPERTIES[kind])
            except cfn.UnresolvedReference as error:
                raise cfn.UnresolvedReference(f"{name} ({kind}): {error}") from None
            create(name, props)
            done.kinds[name] = kind
    return done


# The properties each created type reads; the others are deployment-only and never resolved.
_PROPERTIES = {
    "AWS::DynamoDB::Table": cfn.TABLE_PROPERTIES,
    "AWS::SQS::Queue": ("QueueName", *_QUEUE_ATTRIBUTES),
    "AWS::Events::EventBus": ("Name",),
    "AWS::Events::Rule": ("Name", "EventBusName", "State", "EventPattern", "ScheduleExpression"),
    "AWS::S3::Bucket": ("BucketName", "VersioningConfiguration"),
    "AWS::SecretsManager::Secret": ("Name", "SecretString", "GenerateSecretString"),
    "AWS::OpenSearchService::Domain": ("DomainName",),
    # Its destination is resolved key by key (firehose.DESTINATION_PROPERTIES): the role is AWS's.
    "AWS::KinesisFirehose::DeliveryStream": ("DeliveryStreamName",),
}


_TARGET_PROPERTIES = ("Id", "Arn", "Input", "InputPath", "InputTransformer", "SqsParameters")


def _reads(resource: Mapping[str, Any]) -> set[str]:
    """The resources whose values a created resource's properties need (none for what is not created)."""
    properties = resource.get("Properties") or {}
    read = {key: properties[key] for key in _PROPERTIES.get(resource["Type"], ()) if key in properties}
    # Read below the top level: a rule's targets (after the queues and delivery streams they name) and
    # a delivery stream's destination (after its bucket), not their roles.
    if resource["Type"] == "AWS::Events::Rule":
        read["Targets"] = [{k: t[k] for k in _TARGET_PROPERTIES if k in t} for t in properties.get("Targets") or ()]
    elif resource["Type"] == "AWS::KinesisFirehose::DeliveryStream":
        destination = properties.get("ExtendedS3DestinationConfiguration") or {}
        read["Destination"] = {k: destination[k] for k in firehose.DESTINATION_PROPERTIES if k in destination}
    return cfn.references(read)


def _predict(done: Provisioned, name: str, kind: str) -> None:
    # Refs and ARNs known before anything is created: functions are never created, the HTTP API is
    # the local gateway (its id is "local" in every event).
    if kind == "AWS::Serverless::Function":
        done.resolver.refs[name] = name
        done.resolver.attributes[(name, "Arn")] = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}"
    elif kind == "AWS::Serverless::HttpApi":
        done.resolver.refs[name] = "local"


class _Creators:
    def __init__(self, engines: Aws, done: Provisioned, state_dir: Path, resources: Mapping[str, Any]) -> None:
        self.engines = engines
        self.resources = resources
        self.done = done
        self.state_dir = state_dir

    def for_type(self, kind: str) -> Callable[[str, dict[str, Any]], None] | None:
        return {
            "AWS::DynamoDB::Table": self.table,
            "AWS::SQS::Queue": self.queue,
            "AWS::Events::EventBus": self.event_bus,
            "AWS::Events::Rule": self.rule,
            "AWS::S3::Bucket": self.bucket,
            "AWS::SecretsManager::Secret": self.secret,
            "AWS::OpenSearchService::Domain": self.search_domain,
            "AWS::KinesisFirehose::DeliveryStream": self.delivery_stream,
        }.get(kind)

    def _record(self, name: str, physical: str, ref: str, **attributes: Any) -> None:
        self.done.names[name] = physical
        self.done.resolver.refs[name] = ref
        for attribute, value in attributes.items():
            self.done.resolver.attributes[(name, attribute)] = value

    def table(self, name: str, props: dict[str, Any]) -> None:
        dynamodb = self.engines.client("dynamodb")
        args = cfn.create_table_args(props.get("TableName", name), props)
        ttl_attribute = args.pop("_ttl_attribute")
        try:
            description = dynamodb.create_table(**args)["TableDescription"]
            dynamodb.get_waiter("table_exists").wait(TableName=args["TableName"], WaiterConfig={"Delay": 1})
            if ttl_attribute:
                dynamodb.update_time_to_live(
                    TableName=args["TableName"],
                    TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl_attribute},
                )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ResourceInUseException":
                raise
            description = dynamodb.describe_table(TableName=args["TableName"])["Table"]
        self._record(
            name,
            args["TableName"],
            args["TableName"],
            Arn=description["TableArn"],
            StreamArn=description.get("LatestStreamArn"),
        )

    def queue(self, name: str, props: dict[str, Any]) -> None:
        sqs = self.engines.client("sqs")
        queue_name = props.get("QueueName") or (f"{name}.fifo" if props.get("FifoQueue") else name)
        attributes = {key: _attribute_text(value) for key, value in props.items() if key in _QUEUE_ATTRIBUTES}
        url = sqs.create_queue(QueueName=queue_name, Attributes=attributes)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self._record(name, queue_name, url, Arn=arn, QueueName=queue_name, QueueUrl=url)

    def event_bus(self, name: str, props: dict[str, Any]) -> None:
        events = self.engines.client("events")
        bus = props.get("Name", name)
        try:
            arn = events.create_event_bus(Name=bus)["EventBusArn"]
        except ClientError as error:
            if error.response["Error"]["Code"] != "ResourceAlreadyExistsException":
                raise
            arn = events.describe_event_bus(Name=bus)["Arn"]
        self._record(name, bus, bus, Arn=arn, Name=bus)

    def rule(self, name: str, props: dict[str, Any]) -> None:
        events = self.engines.client("events")
        rule = props.get("Name", name)
        bus = props.get("EventBusName", "default")
        request: dict[str, Any] = {"Name": rule, "EventBusName": bus, "State": props.get("State", "ENABLED")}
        if "EventPattern" in props:
            pattern = props["EventPattern"]
            request["EventPattern"] = pattern if isinstance(pattern, str) else json.dumps(pattern)
        if "ScheduleExpression" in props:
            request["ScheduleExpression"] = props["ScheduleExpression"]
        arn = events.put_rule(**request)["RuleArn"]
        targets = []
        for target in self._targets(name):
            delivery = next((d for d in self.done.deliveries.values() if self._stream_arn(d) == target["Arn"]), None)
            if delivery is not None:
                # Firehose is emulated by its records queue (local/firehose.py): moto delivers there.
                target = {**target, "Arn": delivery.queue_arn}
            if ":sqs:" not in target["Arn"] and ":events:" not in target["Arn"]:
                # moto would try to call the real service; the local stack only wires queues and buses.
                log.warning("rule %s: target %s (%s) is not delivered locally", rule, target["Id"], target["Arn"])
                continue
            targets.append(target)
        if targets:
            events.put_targets(Rule=rule, EventBusName=bus, Targets=targets)
        self._record(name, rule, rule if bus == "default" else f"{bus}|{rule}", Arn=arn)

    def delivery_stream(self, name: str, props: dict[str, Any]) -> None:
        destination = self.resources[name]["Properties"].get("ExtendedS3DestinationConfiguration")
        if destination is None:
            log.warning("%s: only delivery streams to S3 (ExtendedS3DestinationConfiguration) are emulated", name)
            return
        try:
            resolved = self.done.resolver.resolve_keys(destination, firehose.DESTINATION_PROPERTIES)
        except cfn.UnresolvedReference as error:
            raise cfn.UnresolvedReference(f"{name} (AWS::KinesisFirehose::DeliveryStream): {error}") from None
        stream = props.get("DeliveryStreamName", name)
        sqs = self.engines.client("sqs")
        # The records in flight; a record whose object was not written comes back after a minute.
        url = sqs.create_queue(QueueName=f"{stream}-records", Attributes={"VisibilityTimeout": "60"})["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        spec = firehose.DeliverySpec.of(stream, resolved, url, queue_arn)
        self.done.deliveries[name] = spec
        self._record(name, stream, stream, Arn=self._stream_arn(spec))

    @staticmethod
    def _stream_arn(delivery: firehose.DeliverySpec) -> str:
        return f"arn:aws:firehose:{REGION}:{ACCOUNT}:deliverystream/{delivery.name}"

    def _targets(self, rule: str) -> list[dict[str, Any]]:
        # Each target on its own: one aimed at something not emulated is skipped, not fatal.
        targets = []
        for target in self.resources[rule]["Properties"].get("Targets") or ():
            try:
                # Only what moto delivers by: a role or a retry policy is AWS's, and may name IAM.
                targets.append(self.done.resolver.resolve_keys(target, _TARGET_PROPERTIES))
            except cfn.UnresolvedReference as error:
                log.warning("rule %s: target %s is not delivered locally (%s)", rule, target.get("Id"), error)
        return targets

    def bucket(self, name: str, props: dict[str, Any]) -> None:
        s3 = self.engines.client("s3")
        bucket = props.get("BucketName", name.lower())
        try:
            s3.create_bucket(Bucket=bucket)
        except ClientError as error:
            if error.response["Error"]["Code"] not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise
        if "VersioningConfiguration" in props:
            # An object written again keeps its earlier version, locally as in AWS.
            s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration=props["VersioningConfiguration"])
        self._record(
            name,
            bucket,
            bucket,
            Arn=f"arn:aws:s3:::{bucket}",
            DomainName=f"{bucket}.s3.amazonaws.com",
            RegionalDomainName=f"{bucket}.s3.{REGION}.amazonaws.com",
        )

    def secret(self, name: str, props: dict[str, Any]) -> None:
        value = props.get("SecretString") or self._generated_secret(name, props.get("GenerateSecretString") or {})
        secret_name = props.get("Name", name)
        manager = self.engines.client("secretsmanager")
        try:
            arn = manager.create_secret(Name=secret_name, SecretString=value)["ARN"]
        except ClientError as error:
            if error.response["Error"]["Code"] != "ResourceExistsException":
                raise
            arn = manager.put_secret_value(SecretId=secret_name, SecretString=value)["ARN"]
        self._record(name, secret_name, arn, Id=arn)

    def _generated_secret(self, name: str, spec: Mapping[str, Any]) -> str:
        # Kept across restarts (moto's store is not) so cursors signed before a restart still verify.
        path = self.state_dir / SECRETS_FILE
        stored = json.loads(path.read_text()) if path.exists() else {}
        if name not in stored:
            stored[name] = _password(int(spec.get("PasswordLength", 32)), bool(spec.get("ExcludePunctuation")))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(stored, indent=2))
            path.chmod(0o600)
        return str(stored[name])

    def search_domain(self, name: str, props: dict[str, Any]) -> None:
        # A domain in the template resolves to the local search engine: its DomainEndpoint (host:port,
        # plain HTTP locally) is what a function's SEARCH_* variable would be given.
        if not self.engines.search_endpoint:
            log.warning("%s: no local search engine runs, its endpoint stays unresolved", name)
            return
        endpoint = self.engines.search_endpoint.removeprefix("http://")
        domain = props.get("DomainName", name.lower())
        arn = f"arn:aws:es:{REGION}:{ACCOUNT}:domain/{domain}"
        self._record(name, domain, domain, Arn=arn, DomainArn=arn, DomainEndpoint=endpoint)


def _password(length: int, exclude_punctuation: bool) -> str:
    alphabet = string.ascii_letters + string.digits + ("" if exclude_punctuation else string.punctuation)
    return "".join(secrets.choice(alphabet) for _ in range(length))


def _attribute_text(value: Any) -> str:
    # SQS attributes are strings: policies as JSON, booleans lower-case.
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def function_environment(provisioned: Provisioned, props: Mapping[str, Any]) -> dict[str, str]:
    """A function's environment variables (its own and Globals'), resolved against the local resources."""
    raw = ((props.get("Environment") or {}).get("Variables")) or {}
    environment: dict[str, str] = {}
    for name, value in raw.items():
        try:
            resolved = provisioned.resolver.resolve(value)
        except cfn.UnresolvedReference as error:
            raise cfn.UnresolvedReference(f"variable {name}: {error}") from None
        if resolved is not None:
            environment[name] = str(resolved).lower() if isinstance(resolved, bool) else str(resolved)
    return environment
