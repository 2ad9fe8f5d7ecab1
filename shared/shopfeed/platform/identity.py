"""Who is calling: the JWT claims API Gateway's authorizer verified, read from the request context."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shopfeed.platform.errors import Forbidden, Unauthenticated

ADMIN = "admin"
OPS = "ops"


@dataclass(frozen=True)
class Caller:
    user_id: str
    groups: frozenset[str]

    @property
    def is_admin(self) -> bool:
        return ADMIN in self.groups

    @property
    def is_ops(self) -> bool:
        return OPS in self.groups

    def require(self, group: str, action: str) -> None:
        if group not in self.groups:
            raise Forbidden(action)


def _groups(claims: Mapping[str, Any]) -> frozenset[str]:
    raw = claims.get("cognito:groups", claims.get("groups"))
    if raw is None:
        return frozenset()
    if isinstance(raw, list | tuple):
        return frozenset(str(g) for g in raw)
    # HTTP API JWT authorizers hand array claims to Lambda as one string: "[admin ops]".
    return frozenset(part for part in str(raw).strip("[]").replace(",", " ").split() if part)


def caller_from_request_context(request_context: Mapping[str, Any]) -> Caller:
    """The caller of an API Gateway payload-2.0 request; 401 when there are no verified claims.

    API Gateway rejects anonymous requests before Lambda runs, but the function must not depend on
    that: a route wired without the authorizer would otherwise serve everyone.
    """
    claims = ((request_context.get("authorizer") or {}).get("jwt") or {}).get("claims") or {}
    subject = claims.get("sub")
    if not subject:
        raise Unauthenticated()
    return Caller(user_id=str(subject), groups=_groups(claims))
