"""``make dev``: the whole shopfeed chain on one machine, no Docker, no AWS account.

Starts the engines (DynamoDB Local or moto, a moto server for the rest of AWS, osmem for search),
creates the template's resources, loads every function in this process, serves the HTTP API, runs
the template's event source mappings and schedules, seeds demo data through the API and prints
tokens. Ctrl-C (or SIGTERM) stops it all, child processes included. See docs/local-stack.md.
"""

import argparse
import json
import logging
import os
import random
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local import STATE_DIR, cfn, engines, seed
from local.auth import AUDIENCE, JwtAuthorizer, SigningKey, issuer_for
from local.faults import KINDS, FaultSettings, Tally
from local.firehose import DeliverySpec, DeliveryStream
from local.gateway import ApiGateway, Cors
from local.lambdas import Function, FunctionInitError, FunctionSpec, FunctionWorkers
from local.provision import Provisioned, function_environment, provision
from local.queues import QueuePoller, QueueSettings, peek
from local.schedules import Schedule, Scheduler
from local.server import PREFIX, LocalPages, LocalServer
from local.streams import SqsDestination, StreamPoller, StreamSettings

log = logging.getLogger("local.stack")

OPENAPI_FILE = cfn.ROOT / "docs" / "openapi.json"
# Variables that would point the SDK at a real account or at a profile that may not exist here.
_FOREIGN_AWS_VARIABLES = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")


@dataclass
class Poller:
    """A running event source mapping, for the stack page."""

    function: str
    source: str
    kind: str
    run: Callable[[], None]
    stats: Callable[[], Mapping[str, Any]]


@dataclass
class Stack:
    """Everything started after the engines, and how to stop it."""

    engines: engines.Engines
    provisioned: Provisioned
    functions: dict[str, FunctionWorkers]
    unloaded: dict[str, str]  # function -> why it is not running
    server: LocalServer
    pollers: list[Poller]
    scheduler: Scheduler
    stop_event: threading.Event
    on_rate: frozenset[str]  # the functions whose rate(...) schedules run on their rate
    base_url: str
    faults: FaultSettings | None = None
    threads: list[threading.Thread] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sqs = self.engines.client("sqs")  # for the queue pages (boto3 clients are thread-safe)
        self.s3 = self.engines.client("s3")  # for the bucket pages

    def start(self) -> None:
        self._thread("http", self.server.serve_forever)
        for poller in self.pollers:
            self._thread(f"{poller.function}<-{poller.source}", poller.run)
        if self.on_rate:
            self._thread("schedules", lambda: self.scheduler.run(self.on_rate))

    def _thread(self, name: str, target: Callable[[], None]) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self.threads.append(thread)

    def stop(self) -> None:
        self.stop_event.set()
        self.server.shutdown()
        self.server.server_close()
        for thread in self.threads:
            thread.join(timeout=15)  # an invocation in flight finishes first
            if thread.is_alive():
                log.warning("%s did not stop in time", thread.name)
        for function in self.functions.values():
            function.stop()

    def peek_queue(self, logical_id: str) -> list[Any] | None:
        """Every message of a template queue, left on it (bodies parsed when JSON); None: no such queue."""
        if self.provisioned.kinds.get(logical_id) != "AWS::SQS::Queue":
            return None
        url = self.provisioned.resolver.attributes[(logical_id, "QueueUrl")]
        return [_json_or_text(m["Body"]) for m in peek(self.sqs, url)]

    def list_bucket(self, logical_id: str, prefix: str = "") -> list[dict[str, Any]] | None:
        """The current objects of a template bucket under ``prefix`` (key, size); None: no such bucket."""
        if self.provisioned.kinds.get(logical_id) != "AWS::S3::Bucket":
            return None
        pages = self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.provisioned.names[logical_id], Prefix=prefix
        )
        return [{"key": o["Key"], "size": o["Size"]} for page in pages for o in page.get("Contents", [])]

    def read_object(self, logical_id: str, key: str) -> tuple[bytes, str] | None:
        """An object's bytes and content type; None: no such bucket or object."""
        if self.provisioned.kinds.get(logical_id) != "AWS::S3::Bucket":
            return None
        try:
            found = self.s3.get_object(Bucket=self.provisioned.names[logical_id], Key=key)
        except self.s3.exceptions.NoSuchKey:
            return None
        return found["Body"].read(), str(found.get("ContentType") or "application/octet-stream")

    def fault_tally(self) -> Tally:
        """Every function's AWS calls and injected faults, added up."""
        total = Tally()
        for function in self.functions.values():
            total.add(function.faults.snapshot())
        return total

    def describe_faults(self) -> dict[str, Any] | None:
        """The stack page's ``faults``: the settings, the totals, and the counts by operation and kind."""
        if self.faults is None:
            return None
        tally = self.fault_tally()
        return {
            "rate": self.faults.rate,
            "seed": self.faults.seed,
            "kinds": list(self.faults.kinds) or sorted(KINDS),
            **tally.totals(),
            "by_operation": tally.snapshot(),
        }

    def describe(self) -> dict[str, Any]:
        """The stack page (``GET /__local/stack``): endpoints, resources, functions, pollers."""
        resolver = self.provisioned.resolver
        return {
            "api": self.base_url,
            "dynamodb_engine": self.engines.dynamodb_engine,
            "endpoints": {
                "aws": self.engines.aws_endpoint,
                "dynamodb": self.engines.dynamodb_endpoint,
                "search": self.engines.search_endpoint,
            },
            "environment": {k: v for k, v in self.engines.environment().items() if k.startswith("AWS_ENDPOINT_URL")},
            "processes": {
                "stack": os.getpid(),
                **self.engines.processes(),
                **{f"{name} worker {n}": pid for name, f in self.functions.items() for n, pid in enumerate(f.pids())},
                **{f"{name} snapshot": pid for name, f in self.functions.items() if (pid := f.snapshot_pid())},
            },
            "resources": {
                logical: {
                    "type": kind,
                    "name": self.provisioned.names.get(logical),
                    **{attr: value for (owner, attr), value in resolver.attributes.items() if owner == logical},
                }
                for logical, kind in self.provisioned.kinds.items()
                if kind != "AWS::SecretsManager::Secret"
            },
            "functions": {
                **{
                    name: {"loaded": True, **vars(f.stats), **({"faults": f.faults.snapshot()} if self.faults else {})}
                    for name, f in self.functions.items()
                },
                **{name: {"loaded": False, "reason": reason} for name, reason in self.unloaded.items()},
            },
            "faults": self.describe_faults(),
            "pollers": [
                {"function": p.function, "source": p.source, "type": p.kind, "stats": dict(p.stats())}
                for p in self.pollers
            ],
            "schedules": self.scheduler.describe(),
        }


def build(args: argparse.Namespace, running: engines.Engines, stop: threading.Event) -> tuple[Stack, SigningKey]:
    """Provision, load the functions and wire the API, pollers and schedules (nothing runs yet)."""
    template = cfn.load()
    issuer = issuer_for(args.port)
    # The template's external-issuer parameters point its authorizer at the local identity provider,
    # and its search endpoint parameter at the embedded engine (plain HTTP: the functions do not sign).
    search = {"SearchEndpoint": running.search_endpoint} if running.search_endpoint else {}
    parameters = {"JwtIssuer": issuer, "JwtAudience": AUDIENCE, **search, **dict(args.parameter)}
    provisioned = provision(template, running, args.state_dir, parameters)
    resolver = provisioned.resolver
    # The functions' SES is the stack's email sink (GET /__local/mail lists what they sent).
    running.ses_endpoint = f"http://127.0.0.1:{args.port}{PREFIX}/ses"

    faults = fault_settings(args)
    specs, unloaded = _function_specs(template, provisioned, running, faults)
    functions, failed = _start_functions(specs, dict(args.workers_of), args.workers)
    unloaded |= failed
    routes = cfn.http_api_routes(template)
    signing_key = SigningKey.load_or_create(args.state_dir)
    gateway = ApiGateway(
        routes,
        {name: fn.invoke for name, fn in functions.items()},
        _authorizers(template, resolver, signing_key),
        cors=_cors(template, resolver),
    )
    pollers: list[Poller] = []
    schedules: list[Schedule] = []
    for name, function in functions.items():
        for event_name, event in (cfn.function_properties(name, template).get("Events") or {}).items():
            kind = event["Type"]
            if kind == "HttpApi":
                continue  # the gateway's routes
            try:
                props = resolver.resolve(event.get("Properties") or {})
            except cfn.UnresolvedReference as error:
                raise cfn.UnresolvedReference(f"{name}, event {event_name}: {error}") from None
            if kind == "DynamoDB":
                pollers.append(_stream_poller(function, props, provisioned, running, stop))
            elif kind == "SQS":
                pollers.append(_queue_poller(function, props, provisioned, running, stop))
            elif kind in ("Schedule", "ScheduleV2"):
                schedules.append(Schedule.from_event(function, event_name, kind, props))
            else:
                log.warning("%s: %s events (%s) are not run locally", name, kind, event_name)
    for logical, spec in provisioned.deliveries.items():
        pollers.append(_delivery_poller(logical, spec, running, args.delivery_buffer_s, stop))

    base_url = f"http://127.0.0.1:{args.port}"
    scheduler = Scheduler(schedules, stop)
    on_rate = frozenset(scheduler.functions if args.schedules else args.schedule)
    ready = threading.Event()
    pages = LocalPages(ready, issuer, signing_key, lambda: {}, scheduler, OPENAPI_FILE, base_url)
    server = LocalServer(("127.0.0.1", args.port), gateway, pages)
    stack = Stack(
        running, provisioned, functions, unloaded, server, pollers, scheduler, stop, on_rate, base_url, faults
    )
    pages.describe = stack.describe
    pages.peek_queue = stack.peek_queue
    pages.list_bucket = stack.list_bucket
    pages.read_object = stack.read_object
    return stack, signing_key


def _json_or_text(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body


# What a function's environment holds besides the template's variables and the runtime's own: the
# engines' endpoints and credentials (engines.environment()) and these few of the stack's.
_PASSED_VARIABLES = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
_FUNCTION_PROPERTIES = ("Runtime", "Handler", "CodeUri", "Timeout", "MemorySize", "SnapStart")


def _function_specs(
    template: Mapping[str, Any], provisioned: Provisioned, running: engines.Engines, faults: FaultSettings | None
) -> tuple[dict[str, FunctionSpec], dict[str, str]]:
    """Each function's code, handler, settings and exact environment; and why the others cannot run."""
    resolver = provisioned.resolver
    base = {k: os.environ[k] for k in _PASSED_VARIABLES if k in os.environ} | running.environment()
    specs: dict[str, FunctionSpec] = {}
    unloaded: dict[str, str] = {}
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        if "Condition" in resource and not resolver.condition(resource["Condition"]):
            continue
        properties = cfn.function_properties(name, template)
        try:
            props = resolver.resolve_keys(properties, _FUNCTION_PROPERTIES)
            environment = function_environment(provisioned, properties)
        except cfn.UnresolvedReference as error:
            raise cfn.UnresolvedReference(f"{name}: {error}") from None
        if not str(props.get("Runtime", "")).startswith("python"):
            unloaded[name] = f"runtime {props.get('Runtime')} is not run locally"
            continue
        specs[name] = FunctionSpec(
            name=name,
            code_dir=cfn.ROOT / props["CodeUri"],
            handler=props["Handler"],
            environment=base | environment,
            layers=tuple(_layers(template, properties.get("Layers") or ())),
            timeout_s=float(props.get("Timeout", 3)),
            memory_mb=int(props.get("MemorySize", 128)),
            region=engines.REGION,
            faults=faults,
            snap_start=(props.get("SnapStart") or {}).get("ApplyOn") == "PublishedVersions",
        )
    return specs, unloaded


def _start_functions(
    specs: Mapping[str, FunctionSpec], workers: Mapping[str, int], default_workers: int
) -> tuple[dict[str, FunctionWorkers], dict[str, str]]:
    """One warm worker per function, started side by side (each imports its handler once)."""
    pools = {name: FunctionWorkers(spec, workers.get(name, default_workers)) for name, spec in specs.items()}
    failures: dict[str, str] = {}

    def start(pool: FunctionWorkers) -> None:
        try:
            pool.start()
        except FunctionInitError as error:
            failures[pool.name] = str(error)
            log.warning("%s is not loaded: %s", pool.name, error)

    threads = [threading.Thread(target=start, args=(pool,), name=f"init {pool.name}") for pool in pools.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {name: pool for name, pool in pools.items() if name not in failures}, failures


def _layers(template: Mapping[str, Any], layers: Any) -> list[Path]:
    # Lambda puts a Python layer's content on sys.path (/opt/python); locally that is its ContentUri.
    paths = []
    for layer in layers:
        resource = template["Resources"].get(layer.get("Ref") if isinstance(layer, dict) else layer) or {}
        if resource.get("Type") == "AWS::Serverless::LayerVersion":
            paths.append(cfn.ROOT / resource["Properties"]["ContentUri"])
    return paths


def _cors(template: Mapping[str, Any], resolver: cfn.Resolver) -> Cors | None:
    configurations = [
        resolver.resolve((resource.get("Properties") or {}).get("CorsConfiguration"))
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::Serverless::HttpApi"
    ]
    return Cors.of(next((c for c in configurations if c), None))


def _authorizers(template: Mapping[str, Any], resolver: cfn.Resolver, key: SigningKey) -> dict[str, JwtAuthorizer]:
    authorizers = {}
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::Serverless::HttpApi":
            continue
        auth = resolver.resolve((resource.get("Properties") or {}).get("Auth") or {})
        for name, spec in (auth.get("Authorizers") or {}).items():
            jwt_config = spec.get("JwtConfiguration")
            if jwt_config is None:
                log.warning("authorizer %s is not a JWT authorizer: its routes answer 401 locally", name)
                continue
            authorizers[name] = JwtAuthorizer(
                issuer=jwt_config["issuer"],
                audiences=jwt_config.get("audience") or [],
                keys={key.kid: key.public_key},
                identity_source=spec.get("IdentitySource", "$request.header.Authorization"),
            )
    return authorizers


def _stream_poller(
    function: Function,
    props: Mapping[str, Any],
    provisioned: Provisioned,
    running: engines.Engines,
    stop: threading.Event,
) -> Poller:
    settings = StreamSettings.from_event(props)
    table = provisioned.logical_id_of(props["Stream"]) or props["Stream"]
    destination = None
    if settings.on_failure:
        target = provisioned.logical_id_of(settings.on_failure) or settings.on_failure
        if ":sqs:" in settings.on_failure:
            destination = SqsDestination(running.client("sqs"), provisioned.queue_url(settings.on_failure), target)
        else:
            log.warning("%s: OnFailure destination %s is not delivered locally (SQS only)", function.name, target)
    poller = StreamPoller(
        function=function,
        stream_arn=props["Stream"],
        settings=settings,
        streams=running.client("dynamodbstreams"),
        destination=destination,
        region=engines.REGION,
        source_name=f"{table} stream",
        stop=stop,
    )
    return Poller(function.name, f"{table} stream", "DynamoDB", poller.run, lambda: vars(poller.stats))


def _queue_poller(
    function: Function,
    props: Mapping[str, Any],
    provisioned: Provisioned,
    running: engines.Engines,
    stop: threading.Event,
) -> Poller:
    queue = provisioned.logical_id_of(props["Queue"]) or props["Queue"]
    poller = QueuePoller(
        function=function,
        queue_url=provisioned.queue_url(props["Queue"]),
        queue_arn=props["Queue"],
        settings=QueueSettings.from_event(props),
        sqs=running.client("sqs"),
        region=engines.REGION,
        source_name=str(queue),
        stop=stop,
    )
    return Poller(function.name, str(queue), "SQS", poller.run, lambda: vars(poller.stats))


def _delivery_poller(
    logical: str, spec: DeliverySpec, running: engines.Engines, buffer_s: float, stop: threading.Event
) -> Poller:
    # A Firehose delivery stream: what rules put in its records queue, written to its bucket.
    stream = DeliveryStream(spec, running.client("sqs"), running.client("s3"), buffer_s, stop)
    return Poller(logical, f"{spec.bucket} bucket", "Firehose", stream.run, lambda: vars(stream.stats))


def banner(stack: Stack, key: SigningKey, issuer: str, seeded: list[str], elapsed: float) -> str:
    """What `make dev` prints once ready: URLs, engines, functions, and tokens to paste."""
    url = stack.base_url
    tokens = [
        ("TOKEN", f"demo user {seed.DEMO_USER}", key.mint(issuer, seed.DEMO_USER)),
        ("ADMIN_TOKEN", f"admin {seed.ADMIN_USER}", key.mint(issuer, seed.ADMIN_USER, ["admin"])),
        ("OPS_TOKEN", f"ops {seed.OPS_USER}", key.mint(issuer, seed.OPS_USER, ["ops"])),
    ]
    routes = len(cfn.http_api_routes())
    lines = [
        "",
        f"shopfeed local stack ready in {elapsed:.1f} s",
        f"  API          {url}  ({routes} routes of template.yaml)",
        f"  OpenAPI      {url}/__local/openapi.json",
        f"  Swagger UI   {url}/__local/docs",
        f"  Stack        {url}/__local/stack",
        f"  Mail         {url}/__local/mail  (what the functions sent through SES)",
        f"  DynamoDB     {stack.engines.dynamodb_engine} at {stack.engines.dynamodb_endpoint}",
        f"  AWS (moto)   {stack.engines.aws_endpoint}  (EventBridge, SQS, S3)",
        f"  Search       {stack.engines.search_endpoint or 'not running'}",
    ]
    queues = [name for name, kind in stack.provisioned.kinds.items() if kind == "AWS::SQS::Queue"]
    if queues:
        lines.append(f"  Queues       {', '.join(queues)}: peek at {url}/__local/queues/<name>")
    buckets = [name for name, kind in stack.provisioned.kinds.items() if kind == "AWS::S3::Bucket"]
    if buckets:
        lines.append(f"  Buckets      {', '.join(buckets)}: list at {url}/__local/buckets/<name>")
    for poller in stack.pollers:
        if poller.kind == "Firehose":
            lines.append(f"  Delivery     {poller.function} -> {poller.source}")
        else:
            lines.append(f"  Consumer     {poller.function} <- {poller.source}")
    for schedule in stack.scheduler.schedules:
        run = "on its rate and " if schedule.function.name in stack.on_rate and schedule.rate_s else ""
        lines.append(
            f"  Schedule     {schedule.function.name} {schedule.expression}: runs {run}on "
            f"POST {url}/__local/schedules/{schedule.function.name}"
        )
    for name, reason in stack.unloaded.items():
        lines.append(f"  Not running  {name}: {reason}")
    restored = [name for name, pool in stack.functions.items() if pool.spec.snap_start]
    if restored:
        lines.append(
            f"  SnapStart    {len(restored)} functions: init ran once in each one's snapshot, every worker "
            "is restored from it"
        )
    if stack.faults:
        kinds = ", ".join(stack.faults.kinds) or "every kind"
        lines.append(
            f"  Faults       {stack.faults.rate:.1%} of the functions' AWS calls fail ({kinds}), "
            f"seed {stack.faults.seed}: counts at {url}/__local/stack"
        )
    if seeded:
        lines.append(f"  Seed         {'; '.join(seeded)}")
    lines += ["", f"Tokens (valid 12 h; iss {issuer}, aud {AUDIENCE}; more: make token SUB=... GROUPS=...):"]
    for variable, who, token in tokens:
        lines += [f"  # {who}", f"  export {variable}={token}"]
    product = seed.PRODUCTS[0]
    line = {"product_id": product["product_id"], "quantity": 1, "unit_price": product["price"]}
    lines += [
        "",
        "Try:",
        f'  curl -s {url}/products/{product["product_id"]} -H "Authorization: Bearer $TOKEN"',
        f'  curl -s -X POST {url}/orders -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: try-1" \\',
        f"       -H 'content-type: application/json' -d '{json.dumps({'lines': [line]}, separators=(',', ':'))}'",
    ]
    rules = cfn.resources("AWS::Events::Rule").values()
    # Queues a rule fills and no function reads (peeking at a worker's queue would take its messages).
    read = {poller.source for poller in stack.pollers}
    for queue in sorted(set(queues) & cfn.references([r["Properties"].get("Targets") for r in rules]) - read):
        lines.append(f"  curl -s {url}/__local/queues/{queue}   # the events a rule delivered there")
    lines.append(f"  curl -s {url}/__local/mail   # the emails customers were sent")
    lines += ["", "Ctrl-C stops everything.", ""]
    return "\n".join(lines)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m local.stack", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")), help="API port ($PORT)")
    parser.add_argument("--engine", choices=("ddblocal", "moto"), default="ddblocal", help="what serves DynamoDB")
    parser.add_argument("--dynamodb-endpoint", help="use this running DynamoDB (e.g. a persistent DynamoDB Local)")
    parser.add_argument("--no-seed", dest="seed", action="store_false", help="skip the demo data")
    parser.add_argument("--no-search", dest="search", action="store_false", help="do not start the search engine")
    parser.add_argument("--schedules", action="store_true", help="also run rate(...) schedules on their rate")
    parser.add_argument(
        "--schedule",
        action="append",
        default=[],
        metavar="FUNCTION",
        help="run this function's rate(...) schedule on its rate (repeatable), e.g. OrderExpiryFunction",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="worker processes per function: invocations it runs at once, like reserved concurrency (2)",
    )
    parser.add_argument(
        "--function-workers",
        dest="workers_of",
        action="append",
        default=[],
        type=lambda text: (text.split("=", 1)[0], int(text.split("=", 1)[1])),
        metavar="FUNCTION=N",
        help="worker processes of one function (repeatable), e.g. CommerceApiFunction=4",
    )
    parser.add_argument(
        "--parameter",
        action="append",
        default=[],
        type=lambda text: tuple(text.split("=", 1)),
        metavar="KEY=VALUE",
        help="template parameter override (repeatable), e.g. LogLevel=DEBUG",
    )
    parser.add_argument(
        "--delivery-buffer-seconds",
        dest="delivery_buffer_s",
        type=float,
        default=1.0,
        metavar="S",
        help="how long a Firehose delivery stream buffers a partition before writing it (1; the template's "
        "IntervalInSeconds is for AWS)",
    )
    parser.add_argument("--state-dir", type=Path, default=STATE_DIR, help="keys, secrets and logs (.local-stack/)")
    parser.add_argument(
        "--faults",
        type=float,
        default=0.0,
        metavar="RATE",
        help="fail this share (0-1) of the functions' AWS call attempts as AWS fails them, and of their batch calls "
        "in part (local/faults.py); counted on the stack page",
    )
    parser.add_argument("--fault-seed", type=int, help="seed of the injected faults (default: a random one, printed)")
    parser.add_argument(
        "--fault-kinds",
        type=lambda text: tuple(kind for kind in text.split(",") if kind),
        default=(),
        metavar="KIND,...",
        help=f"inject only these kinds (default every one): {', '.join(sorted(KINDS))}",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.faults <= 1:
        parser.error("--faults is a rate between 0 and 1 (0.05: one attempt in twenty)")
    if unknown := set(args.fault_kinds) - KINDS:
        parser.error(f"unknown --fault-kinds {', '.join(sorted(unknown))}")
    return args


def fault_settings(args: argparse.Namespace) -> FaultSettings | None:
    """What ``--faults`` asks of the workers (None: no injection). Without ``--fault-seed`` a seed is
    drawn, and shown, so a run that found something can be played again."""
    if not args.faults:
        return None
    seed = args.fault_seed if args.fault_seed is not None else random.SystemRandom().randrange(1_000_000)
    return FaultSettings(args.faults, seed, args.fault_kinds)


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        record.component = record.name.removeprefix("local.")
        return super().format(record)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(_Formatter("%(asctime)s %(component)-10s %(message)s", "%H:%M:%S"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    for noisy in ("botocore", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # Powertools warns on every invocation that adds no metric; Lambda buries that in a log stream,
    # here it would drown the console.
    warnings.filterwarnings("ignore", message="No application metrics to publish")

    started = time.monotonic()
    stop = threading.Event()
    serving = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        stop.set()
        if not serving.is_set():
            raise KeyboardInterrupt  # abort the startup; the finally blocks stop what started

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    for variable in _FOREIGN_AWS_VARIABLES:
        os.environ.pop(variable, None)
    running = engines.start(args.state_dir, args.engine, args.search, args.dynamodb_endpoint)
    stack: Stack | None = None
    exit_code = 0
    try:
        os.environ.update(running.environment())
        stack, key = build(args, running, stop)
        stack.start()
        serving.set()
        seeded = seed.seed(stack.base_url, *_seed_tokens(key, issuer_for(args.port))) if args.seed else []
        stack.server.pages.ready.set()
        print(banner(stack, key, issuer_for(args.port), seeded, time.monotonic() - started), flush=True)
        while not stop.wait(1.0):
            if dead := running.dead():
                log.error("%s exited; stopping the stack", ", ".join(dead))
                exit_code = 1
                break
    except KeyboardInterrupt:
        pass
    except (seed.SeedFailed, cfn.UnresolvedReference) as error:
        log.error("%s", error)
        exit_code = 1
    finally:
        log.info("stopping")
        if stack is not None:
            stack.stop()
            _report_faults(stack)
        running.stop()
        log.info("stopped")
    return exit_code


def _report_faults(stack: Stack) -> None:
    """At exit: what the injected faults amounted to, so a run can be judged and replayed."""
    if stack.faults is None:
        return
    tally = stack.fault_tally()
    totals = tally.totals()
    share = totals["faults"] / totals["calls"] if totals["calls"] else 0.0
    log.info(
        "faults (rate %s, seed %s): %d of %d AWS calls (%.1f%%)",
        stack.faults.rate,
        stack.faults.seed,
        totals["faults"],
        totals["calls"],
        100 * share,
    )
    for line in tally.summary():
        log.info("  %s", line)


def _seed_tokens(key: SigningKey, issuer: str) -> tuple[str, str, Callable[[str], str], str]:
    return (
        key.mint(issuer, seed.DEMO_USER),
        key.mint(issuer, seed.ADMIN_USER, ["admin"]),
        lambda user_id: key.mint(issuer, user_id),
        key.mint(issuer, seed.OPS_USER, ["ops"]),
    )


if __name__ == "__main__":
    sys.exit(main())
