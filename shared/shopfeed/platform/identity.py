"""Who is calling: the JWT claims API Gateway's authorizer verified, read from the request context."""

import base64
import json
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


# Cognito's rule for a group name: 1 to 128 characters, none of them white space. A name that breaks it
# is never a group here (it grants nothing), so names are compared exactly and never taken apart.
MAX_GROUP_NAME_LENGTH = 128


def _group_name(value: object) -> str | None:
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_GROUP_NAME_LENGTH:
        return None
    if not value.isprintable() or any(character.isspace() for character in value):
        return None
    return value


def _groups_from_claim(raw: object) -> frozenset[str]:
    """The groups of one claim, an array or HTTP API's string form of one.

    HTTP API JWT authorizers hand an array claim to Lambda as one string: its elements joined by single
    spaces inside one pair of brackets, "[admin ops]". That form is read exactly as it is written: one
    pair of brackets taken off, split on single spaces. A claim that is not of that form (a comma, a
    doubled or trailing space, no brackets around several names) grants nothing, and neither does an
    element that is not a well-formed group name ("readers,admin" is one name, and it is not admin).
    """
    if raw is None:
        return frozenset()
    if isinstance(raw, list | tuple):
        elements: list[object] = list(raw)
    elif isinstance(raw, str):
        if raw in ("", "[]"):
            return frozenset()
        # A plain string claim is a single group; the bracketed form is the authorizer's array.
        elements = list(raw[1:-1].split(" ")) if raw.startswith("[") and raw.endswith("]") else [raw]
        if any(_group_name(element) is None for element in elements):
            return frozenset()
    else:
        return frozenset()
    return frozenset(name for element in elements if (name := _group_name(element)) is not None)


def _token_claims(authorization: str | None) -> dict[str, Any] | None:
    """The payload of the bearer token API Gateway's authorizer verified, or None.

    The authorizer stringifies array claims, and a string form cannot tell one group named "readers admin"
    from two groups. The token itself still holds the array: its signature was checked by the authorizer
    (this header is its identity source), so its payload is decoded here without checking it again.
    """
    if not authorization:
        return None
    token = authorization.removeprefix("Bearer ").removeprefix("bearer ").strip()
    parts = token.split(".")
    if len(parts) != 3:  # header.payload.signature
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def _groups(claims: Mapping[str, Any], authorization: str | None) -> frozenset[str]:
    name = "cognito:groups" if "cognito:groups" in claims else "groups"
    token = _token_claims(authorization)
    # The token is the one whose claims these are only when it names the same subject, issued at the
    # same instant and valid until the same one (the authorizer passes them as strings).
    if token is not None and all(str(token.get(c)) == str(claims.get(c)) for c in ("sub", "iat", "exp")):
        return _groups_from_claim(token.get(name))
    return _groups_from_claim(claims.get(name))


def _verified_email(claims: Mapping[str, Any]) -> str | None:
    # HTTP API JWT authorizers hand every claim to Lambda as a string: true arrives as "true".
    if str(claims.get("email_verified", "")).lower() != "true":
        return None
    email = str(claims.get("email") or "").strip().lower()
    return email if 3 <= len(email) <= 254 and "@" in email else None


def caller_from_request_context(request_context: Mapping[str, Any], authorization: str | None = None) -> Caller:
    """The caller of an API Gateway payload-2.0 request; 401 without verified claims, 403 for a subject
    that cannot be a user id. ``authorization`` is the request's Authorization header, the token the
    authorizer verified: its groups are read from it as the array they are.

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
    return Caller(user_id=str(subject), groups=_groups(claims, authorization), verified_email=_verified_email(claims))
