"""What API Gateway's JWT authorizer hands a function, for `sam local start-api`, which skips it.

Wired in only by the derived template that local/samlocal builds (never deployed): the function's
handler becomes ``samlocal_authorizer.lambda_handler``, which puts the bearer token's claims where the
HTTP API puts verified claims (``requestContext.authorizer.jwt.claims``, array claims as one
``"[a b]"`` string) and calls the function's own handler, named in ``SAMLOCAL_HANDLER``.

The token's signature is NOT checked: the claims are trusted as presented, so under sam local anyone
can be anyone. Expiry is checked, and a missing or malformed token gets API Gateway's own 401.
Events that already carry claims (``sam local invoke -e events/api/...``) pass through unchanged.
"""

import base64
import binascii
import importlib
import json
import os
import time
from collections.abc import Callable
from functools import cache
from typing import Any

Handler = Callable[[dict[str, Any], Any], Any]
UNAUTHORIZED = {
    "statusCode": 401,
    "headers": {"content-type": "application/json", "www-authenticate": "Bearer"},
    "body": json.dumps({"message": "Unauthorized"}),
}


@cache
def _target() -> Handler:
    module, _, name = os.environ["SAMLOCAL_HANDLER"].rpartition(".")
    handler: Handler = getattr(importlib.import_module(module), name)
    return handler


def _claims(authorization: str) -> dict[str, str] | None:
    """The token's claims as the HTTP API passes them on, or None where API Gateway would answer 401."""
    scheme, _, token = authorization.partition(" ")
    parts = token.split(".")
    if scheme.lower() != "bearer" or len(parts) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        expired = isinstance(payload, dict) and float(payload.get("exp", "inf")) < time.time()
    except (ValueError, TypeError, binascii.Error):
        return None
    if not isinstance(payload, dict) or "sub" not in payload or expired:
        return None
    # Every claim reaches Lambda as a string; arrays as "[a b]".
    return {
        name: "[" + " ".join(map(str, value)) + "]" if isinstance(value, list) else str(value)
        for name, value in payload.items()
    }


def lambda_handler(event: dict[str, Any], context: Any) -> Any:
    request_context = event.setdefault("requestContext", {})
    if not request_context.get("authorizer"):
        headers = {name.lower(): value for name, value in (event.get("headers") or {}).items()}
        claims = _claims(headers.get("authorization", ""))
        if claims is None:
            return UNAUTHORIZED
        request_context["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
    return _target()(event, context)
