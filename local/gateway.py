"""API Gateway HTTP API, locally: route selection, the JWT authorizer, payload-2.0 events, responses.

Only the template's routes exist. A request matching none gets API Gateway's own 404
``{"message":"Not Found"}``; one the authorizer refuses gets 401 before any function runs; a
function error becomes 500 ``{"message":"Internal Server Error"}``. The event carries what HTTP API
puts in a payload-2.0 event: lower-cased headers with repeated values joined by commas, cookies in
their own list, query parameters joined the same way, path parameters, the body (base64 when it is
not text), ``requestContext.http`` and the verified JWT claims.

With the API's ``CorsConfiguration``, the gateway answers a preflight itself (204, before routes and
authorizers, as API Gateway does) and adds the allow-origin and expose headers to every answer to an
allowed origin; without it an OPTIONS request is a 404 like any method without a route.
"""

import base64
import functools
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from local.auth import JwtAuthorizer, MissingScope, Unauthorized
from local.cfn import HttpRoute
from local.lambdas import Invocation

log = logging.getLogger("local.api")

# Content types API Gateway passes as text; any other body reaches the function base64-encoded.
_TEXT_TYPES = re.compile(r"^(text/.*|application/(.*\+)?(json|xml|javascript|x-www-form-urlencoded))(;.*)?$")


@dataclass(frozen=True)
class HttpRequest:
    """A request as it came off the wire: ``target`` is the raw path and query."""

    method: str
    target: str
    headers: Sequence[tuple[str, str]] = ()
    body: bytes = b""
    source_ip: str = "127.0.0.1"


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    @classmethod
    def json(cls, status: int, document: Any, headers: Iterable[tuple[str, str]] = ()) -> "HttpResponse":
        body = json.dumps(document, separators=(",", ":")).encode()  # as API Gateway writes its own answers
        return cls(status, [("content-type", "application/json"), *headers], body)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


@dataclass(frozen=True)
class _Segment:
    text: str
    kind: int  # 2 literal, 1 {param}, 0 {greedy+}: the more literal a route, the more specific

    @property
    def name(self) -> str:
        return self.text.strip("{}+")


class RouteTable:
    """Selects the route for a method and path as HTTP API does: the most specific match wins."""

    def __init__(self, routes: Iterable[HttpRoute]) -> None:
        self._routes = [(route, [self._segment(s) for s in self._split(route.path)]) for route in routes]
        # Only routes of the path's length whose first segment is the path's (or a parameter) can match,
        # and greedy ones: a request compares a few routes instead of every one of the template's
        # (selection was a fifth of the stack's CPU per request against 58 routes).
        self._greedy = [(r, segments) for r, segments in self._routes if any(s.kind == 0 for s in segments)]
        self._by_shape: dict[tuple[int, str | None], list[tuple[HttpRoute, list[_Segment]]]] = {}
        for route, segments in self._routes:
            if any(s.kind == 0 for s in segments):
                continue
            first = segments[0].text if segments and segments[0].kind == 2 else None
            self._by_shape.setdefault((len(segments), first), []).append((route, segments))

    @staticmethod
    def _split(path: str) -> list[str]:
        return path.strip("/").split("/") if path.strip("/") else []

    @staticmethod
    def _segment(text: str) -> _Segment:
        if text.startswith("{") and text.endswith("+}"):
            return _Segment(text, 0)
        if text.startswith("{") and text.endswith("}"):
            return _Segment(text, 1)
        return _Segment(text, 2)

    def match(self, method: str, path: str) -> tuple[HttpRoute, dict[str, str]] | None:
        """The route and its path parameters (URL-decoded), or None when no route matches."""
        parts = self._split(path)
        best: tuple[tuple[int, ...], HttpRoute, dict[str, str]] | None = None
        candidates = [
            *self._by_shape.get((len(parts), parts[0] if parts else None), ()),
            *(self._by_shape.get((len(parts), None), ()) if parts else ()),
            *self._greedy,
        ]
        for route, segments in candidates:
            if route.method not in (method, "ANY"):
                continue
            params = self._bind(segments, parts)
            if params is None:
                continue
            rank = (*(s.kind for s in segments), 1 if route.method == method else 0)
            if best is None or rank > best[0]:
                best = (rank, route, params)
        return (best[1], best[2]) if best else None

    @staticmethod
    def _bind(segments: list[_Segment], parts: list[str]) -> dict[str, str] | None:
        params: dict[str, str] = {}
        for index, segment in enumerate(segments):
            if segment.kind == 0:
                if index >= len(parts):
                    return None
                params[segment.name] = unquote("/".join(parts[index:]))
                return params
            if index >= len(parts):
                return None
            if segment.kind == 1:
                if not parts[index]:
                    return None
                params[segment.name] = unquote(parts[index])
            elif segment.text != parts[index]:
                return None
        return params if len(parts) == len(segments) else None


# Lambda's synchronous invocation payload limit, which bounds both the event API Gateway sends and the
# response it gets back: a larger request is refused before the function runs (413), a larger response
# is a failed invocation (500). Enforced here so that such bugs show on this machine as they would in AWS.
LAMBDA_PAYLOAD_BYTES = 6 * 1024 * 1024


@dataclass(frozen=True)
class Cors:
    """The HttpApi's ``CorsConfiguration``, resolved (AllowOrigins, AllowMethods, ...)."""

    origins: frozenset[str]
    methods: tuple[str, ...] = ()
    headers: tuple[str, ...] = ()
    expose: tuple[str, ...] = ()
    max_age: int | None = None

    @classmethod
    def of(cls, configuration: Mapping[str, Any] | None) -> "Cors | None":
        if not configuration:
            return None
        return cls(
            origins=frozenset(configuration.get("AllowOrigins") or ()),
            methods=tuple(configuration.get("AllowMethods") or ()),
            headers=tuple(configuration.get("AllowHeaders") or ()),
            expose=tuple(configuration.get("ExposeHeaders") or ()),
            max_age=configuration.get("MaxAge"),
        )

    def allows(self, origin: str | None) -> bool:
        return origin is not None and (origin in self.origins or "*" in self.origins)

    def preflight(self, origin: str | None) -> HttpResponse:
        """API Gateway's own answer to a preflight: 204, with the allow headers only for an allowed origin."""
        if not self.allows(origin):
            return HttpResponse(204)
        headers = [
            ("access-control-allow-origin", str(origin)),
            ("access-control-allow-methods", ",".join(self.methods)),
            ("access-control-allow-headers", ",".join(h.lower() for h in self.headers)),
        ]
        if self.max_age is not None:
            headers.append(("access-control-max-age", str(self.max_age)))
        return HttpResponse(204, headers)

    def decorate(self, origin: str | None, response: HttpResponse) -> HttpResponse:
        """An answer to an allowed origin gets the allow and expose headers; the function's own CORS
        headers never reach the browser (API Gateway ignores them once CORS is configured)."""
        kept = [(k, v) for k, v in response.headers if not k.lower().startswith("access-control-")]
        if not self.allows(origin):
            return HttpResponse(response.status, kept, response.body)
        added = [("access-control-allow-origin", str(origin))]
        if self.expose:
            added.append(("access-control-expose-headers", ",".join(h.lower() for h in self.expose)))
        return HttpResponse(response.status, [*kept, *added], response.body)


class ApiGateway:
    """The HTTP API: routes to functions, guarded by authorizers."""

    def __init__(
        self,
        routes: Iterable[HttpRoute],
        invoke: Mapping[str, Callable[[dict[str, Any]], Invocation]],
        authorizers: Mapping[str, JwtAuthorizer],
        *,
        cors: Cors | None = None,
        api_id: str = "local",
        account: str = "123456789012",
    ) -> None:
        """``invoke`` maps a function's logical id to its invoker; a route of a function missing from
        it answers 500, as an integration with a broken function does."""
        self.routes = RouteTable(routes)
        self._invoke = dict(invoke)
        self._authorizers = dict(authorizers)
        self._cors = cors
        self._api_id = api_id
        self._account = account

    def handle(self, request: HttpRequest) -> HttpResponse:
        request_id = base64.urlsafe_b64encode(os.urandom(10)).decode().rstrip("=")
        if self._cors is None:
            response = self._handle(request, request_id)
        else:
            origin = next((v for k, v in request.headers if k.lower() == "origin"), None)
            preflight = request.method == "OPTIONS" and any(
                k.lower() == "access-control-request-method" for k, _ in request.headers
            )
            if preflight and origin is not None:
                response = self._cors.preflight(origin)
            else:
                response = self._cors.decorate(origin, self._handle(request, request_id))
        return HttpResponse(response.status, [*response.headers, ("apigw-requestid", request_id)], response.body)

    def _handle(self, request: HttpRequest, request_id: str) -> HttpResponse:
        path = urlsplit(request.target).path or "/"
        found = self.routes.match(request.method, path)
        if found is None:
            return HttpResponse.json(404, {"message": "Not Found"})
        route, params = found
        headers = _joined_headers(request.headers)
        claims: dict[str, str] | None = None
        scopes: list[str] | None = None
        if route.authorizer is not None:
            try:
                authorization = self._authorizers[route.authorizer].authorize(headers, route.scopes)
            except Unauthorized as refusal:
                extra = []
                if refusal.description:
                    extra.append(
                        ("www-authenticate", f'Bearer scope="" error="invalid_token" error_description="{refusal}"')
                    )
                return HttpResponse.json(401, {"message": "Unauthorized"}, extra)
            except MissingScope:
                return HttpResponse.json(403, {"message": "Forbidden"})
            claims, scopes = authorization.claims, authorization.scopes
        invoke = self._invoke.get(route.function)
        if invoke is None:
            log.error("%s: function %s is not loaded", route.key, route.function)
            return HttpResponse.json(500, {"message": "Internal Server Error"})
        event = build_event(
            route, params, request, headers, claims, scopes, request_id, api_id=self._api_id, account=self._account
        )
        # The body is what makes an event or a response large: its size stands for the whole payload's,
        # without serialising each one a second time.
        if len(event.get("body") or "") > LAMBDA_PAYLOAD_BYTES:
            return HttpResponse.json(413, {"message": "Request Entity Too Large"})
        result = invoke(event)
        if result.failed:
            return HttpResponse.json(500, {"message": "Internal Server Error"})
        response = http_response(result.payload)
        if len(response.body) > LAMBDA_PAYLOAD_BYTES:
            log.error("%s: response larger than Lambda's %d bytes", route.key, LAMBDA_PAYLOAD_BYTES)
            return HttpResponse.json(500, {"message": "Internal Server Error"})
        return response


def _joined_headers(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        headers[key] = f"{headers[key]},{value}" if key in headers else value
    return headers


def build_event(
    route: HttpRoute,
    params: Mapping[str, str],
    request: HttpRequest,
    headers: Mapping[str, str],
    claims: Mapping[str, str] | None,
    scopes: list[str] | None,
    request_id: str,
    *,
    api_id: str = "local",
    account: str = "123456789012",
    now: float | None = None,
) -> dict[str, Any]:
    """The payload-2.0 event HTTP API sends a Lambda integration for ``request`` on ``route``."""
    now = time.time() if now is None else now
    split = urlsplit(request.target)
    headers = dict(headers)
    cookie_header = headers.pop("cookie", None)
    headers.setdefault("x-forwarded-for", request.source_ip)
    headers.setdefault("x-forwarded-proto", "http")
    headers.setdefault("x-amzn-trace-id", f"Root=1-{int(now):08x}-{os.urandom(12).hex()}")
    query: dict[str, str] = {}
    for name, value in parse_qsl(split.query, keep_blank_values=True):
        query[name] = f"{query[name]},{value}" if name in query else value
    host = headers.get("host", "localhost")
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route.key,
        "rawPath": split.path or "/",
        "rawQueryString": split.query,
        "headers": headers,
        "requestContext": {
            "accountId": account,
            "apiId": api_id,
            "domainName": host.split(":")[0],
            "domainPrefix": host.split(".")[0].split(":")[0],
            "http": {
                "method": request.method,
                "path": split.path or "/",
                "protocol": "HTTP/1.1",
                "sourceIp": request.source_ip,
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": request_id,
            "routeKey": route.key,
            "stage": "$default",
            "time": _request_time(int(now)),
            "timeEpoch": int(now * 1000),
        },
        "isBase64Encoded": False,
    }
    if cookie_header:
        event["cookies"] = [c.strip() for c in cookie_header.replace(",", ";").split(";") if c.strip()]
    if query:
        event["queryStringParameters"] = query
    if params:
        event["pathParameters"] = dict(params)
    if claims is not None:
        event["requestContext"]["authorizer"] = {"jwt": {"claims": dict(claims), "scopes": scopes}}
    if request.body:
        text = _TEXT_TYPES.match(headers.get("content-type", "text/plain").strip().lower())
        # Bytes that are not UTF-8 text reach the function as they are (base64), never repaired: the
        # function refuses them (400) rather than store U+FFFD in their place.
        decoded = _utf8(request.body) if text else None
        if decoded is not None:
            event["body"] = decoded
        else:
            event["body"] = base64.b64encode(request.body).decode()
            event["isBase64Encoded"] = True
    return event


@functools.lru_cache(maxsize=1)
def _request_time(second: int) -> str:
    """``requestContext.time`` of the requests of one second (epoch), formatted once for all of them."""
    return datetime.fromtimestamp(second, UTC).strftime("%d/%b/%Y:%H:%M:%S +0000")


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def http_response(payload: Any) -> HttpResponse:
    """The HTTP answer HTTP API makes of a function's payload-2.0 result.

    A dict with ``statusCode`` is taken as the response; anything else is a 200 JSON body, as
    API Gateway infers it. A malformed response is a 500, as in AWS.
    """
    if not (isinstance(payload, Mapping) and "statusCode" in payload):
        text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
        return HttpResponse(200, [("content-type", "application/json")], text.encode())
    try:
        status = int(payload["statusCode"])
        headers = [(str(k).lower(), str(v)) for k, v in (payload.get("headers") or {}).items()]
        headers += [("set-cookie", str(c)) for c in payload.get("cookies") or ()]
        raw = payload.get("body") or ""
        body = base64.b64decode(raw) if payload.get("isBase64Encoded") else str(raw).encode()
    except (TypeError, ValueError, AttributeError):
        log.error("malformed Lambda response: %.200r", payload)
        return HttpResponse.json(500, {"message": "Internal Server Error"})
    if not any(k == "content-type" for k, _ in headers) and body:
        headers.append(("content-type", "application/json"))
    return HttpResponse(status, headers, body)
