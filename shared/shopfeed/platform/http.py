"""The HTTP edge shared by every API function: resolver construction, problem+json, caller, headers."""

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from http import HTTPStatus
from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.middlewares.openapi_validation import OpenAPIRequestValidationMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.request import Request
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel

from shopfeed.platform import outages, problems
from shopfeed.platform.errors import (
    BodyTooLarge,
    DomainError,
    MalformedBody,
    Unauthenticated,
    UnsupportedMediaType,
    UnusableSubject,
)
from shopfeed.platform.identity import Caller, caller_from_request_context
from shopfeed.platform.observability import logger
from shopfeed.platform.request_body import json_object_body
from shopfeed.platform.versioning import etag


def _problem(status: HTTPStatus, body: dict[str, Any]) -> Response[Any]:
    # Powertools serialises dict bodies only for application/json; problem+json is encoded here.
    return Response(
        status_code=int(status), content_type=problems.PROBLEM_JSON, body=json.dumps(body, separators=(",", ":"))
    )


def _domain_problem(error: DomainError) -> Response[Any]:
    status, body = problems.body_for(error)
    logger.info("request refused", problem=body["type"], status=int(status))
    answer = _problem(status, body)
    if error.retry_after is not None:
        answer.headers["Retry-After"] = str(error.retry_after)
    return answer


def _aws_failure(error: ClientError | BotoCoreError) -> Response[Any]:
    """A dependency the SDK's retries could not get through to: 503 with Retry-After. Any other AWS
    error is a bug and stays one: Lambda reports it (500), with its trace."""
    outage = outages.unavailable(error)
    if outage is None:
        raise error
    logger.warning("dependency unavailable", error=str(error))
    return _domain_problem(outage)


# A refusal lists at most this many errors (and says how many there were): its size never grows with
# the request's.
MAX_LISTED_ERRORS = 20


def _validation_problem(error: RequestValidationError) -> Response[Any]:
    # Field locations and reasons, never the offending values (they may be secrets or huge).
    found = error.errors()
    invalid = [{"loc": list(e["loc"]), "type": e["type"], "msg": e.get("msg", "")} for e in found[:MAX_LISTED_ERRORS]]
    spec = problems.VALIDATION
    return _problem(
        spec.status,
        problems.problem_body(
            spec, "The request does not match the schema.", {"errors": invalid, "error_count": len(found)}
        ),
    )


def _no_route(_: Exception) -> Response[Any]:
    spec = problems.NO_ROUTE
    return _problem(spec.status, problems.problem_body(spec, "No route matches this method and path."))


_BODY = "shopfeed.body"


# Where Powertools keeps the arguments it matched in the path (read by its validation and the route call).
_ROUTE_ARGUMENTS = "_route_args"


class _RequestGuard(OpenAPIRequestValidationMiddleware):
    """Powertools' request validation, first in every route's chain, reading the body our one way.

    Every request with a body passes here, whether or not its route takes one: nothing reaches a handler
    unread. A route's body model then validates the JSON object read here, not Powertools' own parse.
    Path arguments are percent-decoded here too: API Gateway decodes ``pathParameters``, but Powertools
    matches routes on ``rawPath`` and hands the arguments on as sent (``Ada%20Lovelace``), so a user id
    that needs encoding in a path would find no one.
    """

    def handler(self, app: Any, next_middleware: Any) -> Response[Any]:
        event = app.current_event
        app.append_context(
            **{_BODY: json_object_body(event.headers or {}, event.body, bool(event.get("isBase64Encoded")))}
        )
        matched = app.context.get(_ROUTE_ARGUMENTS) or {}
        app.append_context(**{_ROUTE_ARGUMENTS: {name: unquote(value) for name, value in matched.items()}})
        return super().handler(app, next_middleware)

    def _get_body(self, app: Any) -> dict[str, Any]:
        body: dict[str, Any] = app.context[_BODY]
        return body


def build_resolver(*routers: Router) -> APIGatewayHttpResolver:
    """An HTTP API (payload 2.0) resolver with the request guard, validation, problem+json errors and the routers."""
    app = _configured(APIGatewayHttpResolver(enable_validation=True))
    for router in routers:
        app.include_router(router)
    return app


def lazy_resolver(groups: Mapping[str, Sequence[str]]) -> "LazyResolver":
    """``build_resolver`` for an API's entry point: its route groups are imported on their first request
    (``groups`` maps each group's module, which holds a ``router``, to the route keys it serves)."""
    return _configured(LazyResolver(groups))


def _configured[R: APIGatewayHttpResolver](app: R) -> R:
    # Powertools runs this middleware before any other, route dependencies included (no public hook does).
    app._request_validation_middleware = _RequestGuard()  # type: ignore[no-untyped-call]

    def authenticated[E: Exception](answer: Callable[[E], Response[Any]]) -> Callable[[E], Response[Any]]:
        # Powertools validates the request before it resolves the route's dependencies (current_caller
        # among them). Every route is authenticated, so an anonymous request gets 401, not the schema.
        def problem(error: E) -> Response[Any]:
            try:
                caller_from_event(app.current_event.raw_event)
            except (Unauthenticated, UnusableSubject) as refused:
                return _domain_problem(refused)
            return answer(error)

        return problem

    app.exception_handler(DomainError)(_domain_problem)
    app.exception_handler([ClientError, BotoCoreError])(_aws_failure)
    app.exception_handler([UnsupportedMediaType, MalformedBody, BodyTooLarge])(authenticated(_domain_problem))
    app.exception_handler(RequestValidationError)(authenticated(_validation_problem))
    app.not_found(_no_route)
    return app


class LazyResolver(APIGatewayHttpResolver):
    """A resolver that imports a route group when a request first needs it (decision 233).

    An API's import would otherwise load every route, schema, model and service module it serves
    (~90 modules, most of its import time above Powertools' own), though a container's first request
    runs one group. API Gateway names the route it selected in the event (``routeKey``, ``GET
    /products/{product_id}``), so the entry point's table (route key → group) says which group to
    import before Powertools matches the path. A route key the table does not hold (``$default``, or
    an event made by hand) loads every group, so Powertools answers as with everything loaded: 404
    and 405 alike. Powertools offers no lazy registration; this adds routers with ``include_router``,
    its own way, and changes nothing in how it matches: it tries its static routes before its dynamic
    ones across every router, so a group loaded alone must dispatch its routes as with all loaded
    (``tests/unit/test_route_groups.py`` proves it for every route of both APIs).
    """

    def __init__(self, groups: Mapping[str, Sequence[str]]) -> None:
        super().__init__(enable_validation=True)
        self.groups = {module: tuple(keys) for module, keys in groups.items()}
        self._group_of = {key: module for module, keys in self.groups.items() for key in keys}
        # No lock: an execution environment serves one request at a time (Powertools itself keeps the
        # current event on its class), and the in-process races of the tests run in containers.
        self._loaded: list[str] = []

    @property
    def loaded(self) -> tuple[str, ...]:
        """The groups included so far, in the order they were."""
        return tuple(self._loaded)

    def load(self, *modules: str) -> None:
        """Import ``modules`` (groups of the table) and include their routers, each once."""
        for module in modules:
            if module not in self._loaded:
                self.include_router(importlib.import_module(module).router)
                self._loaded.append(module)

    def load_all(self) -> None:
        """Every group, in the table's order: what priming, the OpenAPI document and route lists see."""
        self.load(*self.groups)

    def resolve(self, event: Mapping[str, Any], context: LambdaContext) -> dict[str, Any]:
        module = self._group_of.get(event.get("routeKey", ""))
        if module is None:
            self.load_all()
        else:
            self.load(module)
        return super().resolve(event, context)

    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        # The document is the whole API's, whatever requests this container has served.
        self.load_all()
        return super().get_openapi_schema(*args, **kwargs)


def caller_from_event(event: Mapping[str, Any]) -> Caller:
    headers = event.get("headers") or {}
    return caller_from_request_context(event.get("requestContext") or {}, headers.get("authorization"))


def current_caller(request: Request) -> Caller:
    return caller_from_event(request.resolved_event.raw_event)


CurrentCaller = Annotated[Caller, Depends(current_caller)]


def json_response(
    model: BaseModel | Mapping[str, Any],
    status: int = 200,
    version: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response[Any]:
    body = model.model_dump(mode="json") if isinstance(model, BaseModel) else dict(model)
    all_headers = dict(headers or {})
    if version is not None:
        all_headers["ETag"] = etag(version)
    return Response(status_code=status, content_type="application/json", body=body, headers=all_headers)


def created_response(view: BaseModel, replayed: bool, location: str | None = None) -> Response[Any]:
    """The 201 of an idempotent create, first time or replayed (then with Idempotent-Replayed)."""
    # Imported here: the routes that create import it anyway, and an API's import need not (decision 238).
    from shopfeed.platform.idempotency import REPLAYED_HEADER

    headers = {REPLAYED_HEADER: "true"} if replayed else {}
    if location:
        headers["Location"] = location
    return json_response(view, status=201, headers=headers)
