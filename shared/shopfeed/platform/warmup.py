"""Priming at init: what a container's first request would pay for, paid in Lambda's Init phase.

Without it the first request of every container builds the pydantic validators (models declare
``defer_build`` to keep imports cheap), Powertools' route dependants and TypeAdapters, the boto3
clients, and fetches the cursor secret from Secrets Manager: measured ~15× a warm request and a
Secrets Manager round trip a warm request never makes. Init runs with a full CPU burst before any
caller waits, and with SnapStart it runs once per published version and is then restored from a
snapshot, so work moved here leaves the request path entirely.

Each ``functions/*/app.py`` calls ``prime`` once, after building its handler. Priming runs only in a
Lambda execution environment (``AWS_LAMBDA_FUNCTION_NAME``): tests and tools that import an app
module keep it free of environment reads and boto3 at import. Not under ``sam local`` either
(``AWS_SAM_LOCAL``): its emulator counts init inside the first invoke's timeout, where Lambda gives
init a budget of its own, and each ``sam local invoke`` starts a new container, so priming there
would only add to the one request it serves.

SnapStart restores many environments from one snapshot, so whatever the snapshot froze that must
differ between them is refreshed after each restore (``refresh_after_restore``).
"""

import json
import logging
import os
import random
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import urlencode

from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.compat import HTTPHeaders
from pydantic import BaseModel
from snapshot_restore_py import register_after_restore  # type: ignore[import-untyped]

from shopfeed.platform.clock import new_id
from shopfeed.platform.observability import logger

if TYPE_CHECKING:
    # Only the API function has a resolver: the consumers must not pay for importing one.
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

    from shopfeed.platform import dynamo

_PATH_PARAMETER = re.compile(r"<(\w+)>")
_WITH_BODY = {"POST", "PUT", "PATCH"}


@runtime_checkable
class LoadsRouteGroups(Protocol):
    """A resolver that imports its route groups on their first request (``platform.http.LazyResolver``)."""

    def load_all(self) -> None: ...


def in_lambda() -> bool:
    return "AWS_LAMBDA_FUNCTION_NAME" in os.environ and os.environ.get("AWS_SAM_LOCAL") != "true"


def prime(
    *steps: Callable[[], object],
    resolver: "APIGatewayHttpResolver | None" = None,
    connections: Sequence[Callable[[], object]] = (),
) -> None:
    """At init in Lambda: run ``steps`` (composition roots: settings, clients, secrets), build every
    shopfeed model then loaded, send each route of ``resolver`` one anonymous request, then run
    ``connections`` (what opens a connection the first request will use), unless init is making a
    SnapStart snapshot. Elsewhere: nothing."""
    if in_lambda():
        prime_now(*steps, resolver=resolver, connections=connections)


def prime_now(
    *steps: Callable[[], object],
    resolver: "APIGatewayHttpResolver | None" = None,
    connections: Sequence[Callable[[], object]] = (),
) -> None:
    """``prime`` without the Lambda check (tests call it)."""
    # Steps first: the composition roots import the repositories (and their items' models) as they build
    # them (decision 214), and the models those bring must be built here too.
    for step in steps:
        step()
    if resolver is not None:
        # The API's import left its route groups to their first requests (decision 233): their
        # schemas and models are built below with the rest.
        load_every_route_group(resolver)
    new_id()  # python-ulid is imported on the first id (platform.clock): the first create's, unprimed
    build_models("shopfeed")
    if resolver is not None:
        resolve_every_route(resolver)
    # Last: a first search measured ~0.5 ms faster with its connection opened after the routes'
    # priming than before it (the code it runs was still hot in the caches; decision 268). Not into a
    # SnapStart snapshot: no environment restored from it could use a connection it froze.
    if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") != "snap-start":
        for step in connections:
            step()


def build_models(package: str) -> int:
    """Build the validators of every pydantic model defined in the loaded modules of ``package``."""
    built = 0
    for name, module in list(sys.modules.items()):
        if name != package and not name.startswith(f"{package}."):
            continue
        for value in list(vars(module).values()):
            is_model = isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == name
            if is_model and not value.__pydantic_complete__:
                value.model_rebuild()
                built += 1
    return built


# What the dry runs write, were one ever sent: nothing (the condition cannot hold).
_NEVER = {"ConditionExpression": "attribute_exists(#w) AND attribute_not_exists(#w)"} | {
    "ExpressionAttributeNames": {"#w": "PK"}
}
_KEY = {"PK": {"S": "warmup"}, "SK": {"S": "warmup"}}
# The request id of the dry runs' answers: what tells them from real calls in an ``after-call`` hook.
DRY_RUN_REQUEST_ID = "shopfeed-warmup-dry-run"


def _dry_runs(table: str) -> dict[str, dict[str, Any]]:
    """The DynamoDB operations the routes call on ``table``, each with the fewest parameters it takes."""
    return {
        "get_item": {"TableName": table, "Key": _KEY},
        "query": {
            "TableName": table,
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": "warmup"}},
        },
        "put_item": {"TableName": table, "Item": _KEY, **_NEVER},
        "update_item": {"TableName": table, "Key": _KEY, **_NEVER},
        "delete_item": {"TableName": table, "Key": _KEY, **_NEVER},
        "transact_write_items": {"TransactItems": [{"ConditionCheck": {"TableName": table, "Key": _KEY, **_NEVER}}]},
    }


class _EmptyBody:
    """The raw body of the dry runs' answer, as botocore reads one (``stream``)."""

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield b"{}"


def _answer_here(request: AWSPreparedRequest, **_: Any) -> AWSResponse:
    return AWSResponse(request.url, 200, HTTPHeaders.from_dict({"x-amzn-requestid": DRY_RUN_REQUEST_ID}), _EmptyBody())


def dry_run_dynamodb(*tables: "dynamo.Table") -> int:
    """Call each DynamoDB operation the routes use on ``tables`` once, answered here instead of sent.

    A client's first call of an operation builds what its later calls reuse: the operation model and
    its shapes, the serializer's and the parser's walks, the user agent, the event aliases, and the
    endpoint, which botocore resolves per operation and table (the table names are endpoint
    parameters). Measured, that was most of what a primed first request paid over a warm one
    (decision 216). No call reaches AWS: botocore's ``before-send`` event lets a handler answer the
    prepared, signed request in place of the HTTP send, so everything up to the wire and the parsing
    of an (empty) answer runs, and nothing leaves the process. Every write is conditioned on what
    cannot hold, should one ever be sent. Returns the operations run."""
    ran = 0
    names = sorted({table.name for table in tables})
    for client in {id(table.client): table.client for table in tables}.values():
        events = client.meta.events
        # First, so that its answer is the one botocore takes; removed again whatever happens.
        # (botocore-stubs type event handlers as returning None; before-send's may return the response.)
        events.register_first("before-send.dynamodb", _answer_here, unique_id=DRY_RUN_REQUEST_ID)  # type: ignore[arg-type]
        try:
            runs = [(operation, parameters) for name in names for operation, parameters in _dry_runs(name).items()]
            # A batch read's endpoint is resolved per set of tables: each alone, and all together.
            batches = [[name] for name in names] + ([names] if len(names) > 1 else [])
            runs += [("batch_get_item", {"RequestItems": {n: {"Keys": [_KEY]} for n in batch}}) for batch in batches]
            for operation, parameters in runs:
                getattr(client, operation)(**parameters)
                ran += 1
        finally:
            events.unregister("before-send.dynamodb", unique_id=DRY_RUN_REQUEST_ID)
    return ran


def load_every_route_group(resolver: "APIGatewayHttpResolver") -> None:
    """Import every route group of an API's resolver (``platform.http.LazyResolver``), which its
    entry point's import leaves to their first requests; any other resolver holds its routes already."""
    if isinstance(resolver, LoadsRouteGroups):
        resolver.load_all()


def resolve_every_route(resolver: "APIGatewayHttpResolver") -> int:
    """Send every route one anonymous request, then build the validators of its fields. Each request is
    refused with 401 after request validation and before any handler runs, so Powertools builds its
    dependants and request validators and nothing is read or written; the answer's validator, which
    only an answered request would reach, and the body's are built here (decision 216)."""
    load_every_route_group(resolver)
    # Powertools keeps its routes in these two lists and offers no public iterator over them.
    routes = [*resolver._static_routes, *resolver._dynamic_routes]
    with _quiet():
        for route in routes:
            query = [param.alias for param in route.dependant.query_params]
            resolver.resolve(_anonymous_event(route.method, route.path, query), LambdaContext())
            _inspect_handler(route)
            dependant = route.dependant
            fields = [dependant.return_param, route.body_field, *dependant.query_params, *dependant.path_params]
            for field in fields:
                if field is not None:
                    # Its TypeAdapter defers its schema to the first validation (the models declare
                    # defer_build): validating nothing builds it (and its serializer) and answers an error.
                    field.validate(None)
    return len(routes)


def _inspect_handler(route: Any) -> None:
    """What Powertools works out about a handler on its first call and keeps on the route: whether it
    declares ``Depends()`` parameters, and which parameter (if any) takes the ``Request``. A refused
    priming request never calls the handler, so it is worked out here (the first call then finds it
    done; measured ~0.2 ms of a first request). Both are Powertools' own: the property, and the function
    and attributes ``_registered_api_adapter`` uses, as there is no public way to ask for them."""
    from aws_lambda_powertools.event_handler.api_gateway import _find_request_param_name

    _ = route.has_dependencies
    if not route.request_param_name_checked:
        route.request_param_name = _find_request_param_name(route.func)
        route.request_param_name_checked = True


def _anonymous_event(method: str, rule: str, query: Sequence[str] = ()) -> dict[str, Any]:
    """A request to ``rule`` without a token; each of ``query`` is sent (as ``warmup``), so that the
    validation of query values (what each parameter's annotation is, checked against the collection
    types on first use) runs too."""
    body = method in _WITH_BODY
    path = _PATH_PARAMETER.sub("warmup", rule)
    route_key = f"{method} {_PATH_PARAMETER.sub(r'{\1}', rule)}"  # as API Gateway names it
    parameters = dict.fromkeys(query, "warmup")
    return {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": path,
        "rawQueryString": urlencode(parameters),
        **({"queryStringParameters": parameters} if parameters else {}),
        "headers": {"content-type": "application/json"} if body else {},
        "requestContext": {
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "requestId": "warmup",
            "routeKey": route_key,
            "stage": "$default",
        },
        "body": json.dumps({}) if body else None,
        "isBase64Encoded": False,
    }


@contextmanager
def _quiet() -> Iterator[None]:
    # The priming requests are refused by design: their "request refused" lines would only be noise.
    level = logger.log_level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def after_restore(*steps: Callable[[], object]) -> None:
    """In Lambda: run ``steps`` again in each environment restored from a SnapStart snapshot (reads
    the snapshot would otherwise hand every restored environment as old as the published version)."""
    if in_lambda():
        for step in steps:
            register_after_restore(step)


def refresh_after_restore() -> None:
    """Run by the Lambda runtime in each environment restored from a SnapStart snapshot."""
    # Every restored environment would otherwise draw the same "random" retry jitter (the snapshot
    # froze the generator's state), so contending containers would back off in lockstep.
    random.seed()
    # python-ulid draws fresh bytes per millisecond, but keeps the last timestamp and randomness to
    # stay monotonic within one: a new generator shares nothing with the other restored environments.
    import ulid  # as platform.clock does, on first use

    ulid.default_generator = ulid.ULIDGenerator()


register_after_restore(refresh_after_restore)
