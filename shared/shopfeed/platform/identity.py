"""Who is calling: the JWT claims API Gateway's authorizer verified, read from the request context."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shopfeed.platform.errors import Forbidden, Unauthenticated, UnusableSubject

ADMIN = "admin"
OPS = "ops"
# OpenID Connect caps `sub` at 255 ASCII characters; other issuers send text (Unicode, spaces, `|`, `#`).
# Any printable text of up to 255 bytes of UTF-8 is a user id (every compliant subject, and other
# scripts as far as they fit): keys embed it (escaped where other parts follow, platform.key_parts),
# and 255 bytes (765 escaped) leave room for a prefix in a sort key, which DynamoDB caps at 1,024 bytes.
MAX_SUBJECT_LENGTH = 255
MAX_SUBJECT_BYTES = 255


def subject_problem(subject: str) -> str | None:
    """Why a subject cannot be a user id, or None when it can."""
    if not 1 <= len(subject.encode()) <= MAX_SUBJECT_BYTES:
        return f"it must be 1 to {MAX_SUBJECT_BYTES} bytes of UTF-8 (255 ASCII characters, as OpenID Connect allows)"
    if not subject.isprintable():
        return "it must be printable text (no control or separator characters other than the space)"
    return None


@dataclass(frozen=True)
class Caller:
    user_id: str
    groups: frozenset[str]
    verified_email: str | None = None  # the token's `email` claim, when `email_verified` is true

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


def _verified_email(claims: Mapping[str, Any]) -> str | None:
    # HTTP API JWT authorizers hand every claim to Lambda as a string: true arrives as "true".
    if str(claims.get("email_verified", "")).lower() != "true":
        return None
    email = str(claims.get("email") or "").strip().lower()
    return email if 3 <= len(email) <= 254 and "@" in email else None


def caller_from_request_context(request_context: Mapping[str, Any]) -> Caller:
    """The caller of an API Gateway payload-2.0 request; 401 without verified claims, 403 for a subject
    that cannot be a user id.

    API Gateway rejects anonymous requests before Lambda runs, but the function must not depend on
    that: a route wired without the authorizer would otherwise serve everyone.
    """
    claims = ((request_context.get("authorizer") or {}).get("jwt") or {}).get("claims") or {}
    subject = claims.get("sub")
    if not subject:
        raise Unauthenticated()
    problem = subject_problem(str(subject))
    if problem:
        raise UnusableSubject(problem)
    return Caller(user_id=str(subject), groups=_groups(claims), verified_email=_verified_email(claims))
