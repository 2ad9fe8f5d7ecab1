"""API Gateway HTTP API (payload 2.0) events, built from the sample in events/api/."""

import copy
import json
import uuid
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from local import cfn
from local.gateway import RouteTable

EVENTS = Path(__file__).resolve().parents[2] / "events"


@cache
def _routes() -> RouteTable:
    return RouteTable(cfn.http_api_routes())


def route_key(method: str, path: str) -> str:
    """The ``routeKey`` API Gateway sends for ``method path``: the template route it selects
    (``GET /products/{product_id}``), or ``$default`` for a path no route matches, which the API would
    answer itself and a test sends to a function anyway."""
    found = _routes().match(method, path)
    return found[0].key if found else "$default"


@cache
def sample(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return event


def claims_for(sub: str | None, groups: tuple[str, ...] = (), email: str | None = None) -> dict[str, Any] | None:
    """Claims as HTTP API's JWT authorizer passes them to Lambda: every value a string, arrays one
    bracketed string. ``email`` is sent as verified (an ID token of an issuer that checked it)."""
    if sub is None:
        return None
    verified = {"email": email, "email_verified": "true"} if email else {}
    return {"sub": sub, "cognito:groups": "[" + " ".join(groups) + "]", **verified}


def http_event(
    method: str,
    path: str,
    *,
    body: Any = None,
    headers: dict[str, str] | None = None,
    query: dict[str, Any] | None = None,
    claims: dict[str, Any] | None = None,
    raw_body: str | None = None,
    base64_encoded: bool = False,
) -> dict[str, Any]:
    event = copy.deepcopy(sample("api/place_order.json"))
    query = {k: v for k, v in (query or {}).items() if v is not None}
    event["routeKey"] = route_key(method, path)
    event["rawPath"] = path
    event["rawQueryString"] = urlencode(query)
    event["queryStringParameters"] = {k: str(v) for k, v in query.items()} or None
    event["headers"] = {"accept": "application/json", "host": "localhost"} | {
        k.lower(): v for k, v in (headers or {}).items()
    }
    if body is not None or raw_body is not None:
        event["headers"].setdefault("content-type", "application/json")
    event["body"] = raw_body if raw_body is not None else (json.dumps(body) if body is not None else None)
    event["isBase64Encoded"] = base64_encoded
    context = event["requestContext"]
    context["http"]["method"] = method
    context["http"]["path"] = path
    context["routeKey"] = event["routeKey"]
    context["requestId"] = str(uuid.uuid4())
    if claims is None:
        context.pop("authorizer", None)
    else:
        context["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
    return event
