"""Errors to ``application/problem+json`` (RFC 9457), in one table.

The same table feeds the OpenAPI document: a route lists the errors it may raise and
``problem_responses`` turns them into documented responses, so code and docs cannot disagree.
The platform's own errors are listed here; a context adds its errors with ``register``, in the
module that declares them (so any route importing an error finds it registered).
"""

from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from pydantic import BaseModel, ConfigDict

from shopfeed.platform import errors
from shopfeed.platform.errors import SearchUnavailable

PROBLEM_JSON = "application/problem+json"
_TYPE_BASE = "https://shopfeed.dev/problems/"


@dataclass(frozen=True)
class ProblemSpec:
    status: HTTPStatus
    slug: str
    title: str


PROBLEMS: dict[type[errors.DomainError], ProblemSpec] = {
    errors.Unauthenticated: ProblemSpec(HTTPStatus.UNAUTHORIZED, "unauthenticated", "Authentication required"),
    errors.Forbidden: ProblemSpec(HTTPStatus.FORBIDDEN, "forbidden", "Forbidden"),
    errors.UnusableSubject: ProblemSpec(HTTPStatus.FORBIDDEN, "unusable-subject", "Unusable token subject"),
    errors.NotFound: ProblemSpec(HTTPStatus.NOT_FOUND, "not-found", "Resource not found"),
    errors.AlreadyExists: ProblemSpec(HTTPStatus.CONFLICT, "already-exists", "Resource already exists"),
    errors.EmailInUse: ProblemSpec(HTTPStatus.CONFLICT, "email-in-use", "Email address already registered"),
    errors.InvalidRequest: ProblemSpec(HTTPStatus.UNPROCESSABLE_ENTITY, "invalid-request", "Invalid request"),
    errors.InvalidCursor: ProblemSpec(HTTPStatus.BAD_REQUEST, "invalid-cursor", "Invalid cursor"),
    errors.MissingIdempotencyKey: ProblemSpec(
        HTTPStatus.BAD_REQUEST, "idempotency-key-missing", "Idempotency-Key required"
    ),
    errors.IdempotencyKeyReused: ProblemSpec(
        HTTPStatus.UNPROCESSABLE_ENTITY, "idempotency-key-reused", "Idempotency-Key reused"
    ),
    errors.PreconditionRequired: ProblemSpec(
        HTTPStatus.PRECONDITION_REQUIRED, "precondition-required", "If-Match required"
    ),
    errors.StaleVersion: ProblemSpec(HTTPStatus.PRECONDITION_FAILED, "stale-version", "Precondition failed"),
    errors.InvalidTransition: ProblemSpec(HTTPStatus.CONFLICT, "invalid-transition", "Invalid state transition"),
    errors.Contention: ProblemSpec(HTTPStatus.CONFLICT, "contention", "Concurrent update"),
    errors.UnsupportedMediaType: ProblemSpec(
        HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type", "Unsupported media type"
    ),
    errors.MalformedBody: ProblemSpec(HTTPStatus.BAD_REQUEST, "malformed-body", "Malformed body"),
    errors.BodyTooLarge: ProblemSpec(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body-too-large", "Body too large"),
    SearchUnavailable: ProblemSpec(HTTPStatus.SERVICE_UNAVAILABLE, "search-unavailable", "Search unavailable"),
    errors.DependencyUnavailable: ProblemSpec(
        HTTPStatus.SERVICE_UNAVAILABLE, "dependency-unavailable", "Temporarily unavailable"
    ),
}


def register(error: type[errors.DomainError], status: HTTPStatus, slug: str, title: str) -> None:
    """Map a context's ``error`` to a problem type (``https://shopfeed.dev/problems/<slug>``).

    A slug taken by another error is a programming error: problem types are a public contract.
    """
    spec = ProblemSpec(status, slug, title)
    if any(taken.slug == slug and other is not error for other, taken in PROBLEMS.items()):
        raise ValueError(f"problem type {slug!r} is already taken")
    PROBLEMS[error] = spec


VALIDATION = ProblemSpec(HTTPStatus.UNPROCESSABLE_ENTITY, "validation", "Request validation failed")
NO_ROUTE = ProblemSpec(HTTPStatus.NOT_FOUND, "no-route", "No such route")


class Problem(BaseModel):
    """RFC 9457 problem details; extension members (ids, reasons) may follow."""

    model_config = ConfigDict(defer_build=True)

    type: str
    title: str
    status: int
    detail: str


def spec_for(error: errors.DomainError) -> ProblemSpec:
    for cls in type(error).__mro__:
        if cls in PROBLEMS:
            return PROBLEMS[cls]
    raise LookupError(f"{type(error).__name__} has no problem mapping")  # a programming error


def problem_body(spec: ProblemSpec, detail: str, extensions: dict[str, object] | None = None) -> dict[str, Any]:
    return {
        "type": _TYPE_BASE + spec.slug,
        "title": spec.title,
        "status": int(spec.status),
        "detail": detail,
        **(extensions or {}),
    }


def body_for(error: errors.DomainError) -> tuple[HTTPStatus, dict[str, Any]]:
    spec = spec_for(error)
    return spec.status, problem_body(spec, error.detail, error.extensions())


def problem_responses(*raised: type[errors.DomainError], ok: int = 200) -> dict[int, Any]:
    """OpenAPI ``responses``: the success status (schema from the route's return type) plus the errors
    a route may raise, and 401, 403 (a token subject that cannot be a user id), 422 and 503 (an AWS
    dependency that stayed unavailable through the SDK's retries), which every route has."""
    specs = [PROBLEMS[errors.Unauthenticated], PROBLEMS[errors.UnusableSubject], VALIDATION]
    specs.append(PROBLEMS[errors.DependencyUnavailable])
    specs += [PROBLEMS[e] for e in raised]
    grouped: dict[int, list[str]] = {}
    for spec in specs:
        grouped.setdefault(int(spec.status), []).append(spec.title)
    documented: dict[int, Any] = {ok: {"description": {201: "Created", 202: "Accepted"}.get(ok, "OK")}}
    if ok == 204:
        # No body: an empty content map, else the document would promise a JSON null a client cannot parse.
        documented[ok] = {"description": "No Content", "content": {}}
    for status, titles in sorted(grouped.items()):
        documented[status] = {
            "description": "; ".join(dict.fromkeys(titles)),
            "content": {PROBLEM_JSON: {"model": Problem}},
        }
    return documented
