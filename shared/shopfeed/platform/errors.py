"""Typed errors. Each carries the data a client needs; ``problems`` maps them to HTTP once.

Services and repositories raise these; nothing below the HTTP edge knows about status codes.
"""


class DomainError(Exception):
    """Base of every error a client may see. ``detail`` is the human sentence; extra fields are data.
    ``retry_after`` (seconds) is sent as a Retry-After header: a dependency that is down says when to
    ask again."""

    retry_after: int | None = None

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def extensions(self) -> dict[str, object]:
        """Machine-readable members added to the problem document (RFC 9457 extension members)."""
        return {}


class Unauthenticated(DomainError):
    def __init__(self) -> None:
        super().__init__("A valid bearer token is required.")


class UnusableSubject(DomainError):
    """A verified token whose subject cannot be a user id here (too long, control characters)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"The subject of your token cannot be used as a user id: {reason}.")


class Forbidden(DomainError):
    def __init__(self, action: str) -> None:
        super().__init__(f"You are not allowed to {action}.")


class NotFound(DomainError):
    def __init__(self, kind: str, ident: str) -> None:
        super().__init__(f"{kind} {ident} does not exist.")
        self.kind, self.ident = kind, ident

    def extensions(self) -> dict[str, object]:
        return {"resource": self.kind, "id": self.ident}


class AlreadyExists(DomainError):
    def __init__(self, kind: str, ident: str) -> None:
        super().__init__(f"{kind} {ident} already exists.")
        self.kind, self.ident = kind, ident

    def extensions(self) -> dict[str, object]:
        return {"resource": self.kind, "id": self.ident}


class EmailInUse(DomainError):
    """The caller's verified address belongs to another account: say so, and nothing about that account."""

    def __init__(self) -> None:
        super().__init__("Your verified email address is already registered to another account.")

    def extensions(self) -> dict[str, object]:
        return {"resource": "email"}


class InvalidRequest(DomainError):
    """Well-formed JSON that breaks a rule no schema can express (duplicate lines, mixed currencies)."""


class InvalidCursor(DomainError):
    def __init__(self) -> None:
        super().__init__("The cursor is malformed, forged, or belongs to another query.")


class MissingIdempotencyKey(DomainError):
    def __init__(self) -> None:
        super().__init__("This request creates a resource: send an Idempotency-Key header (1-255 characters).")


class IdempotencyKeyReused(DomainError):
    def __init__(self, key: str) -> None:
        super().__init__(f"Idempotency-Key {key!r} was already used with a different request body.")
        self.key = key


class PreconditionRequired(DomainError):
    def __init__(self) -> None:
        super().__init__('Send If-Match with the ETag you read (for example If-Match: "3").')


class StaleVersion(DomainError):
    def __init__(self, kind: str, ident: str, current_version: int | None) -> None:
        super().__init__(f"{kind} {ident} has changed since you read it; read it again and retry.")
        self.kind, self.ident, self.current_version = kind, ident, current_version

    def extensions(self) -> dict[str, object]:
        return {"resource": self.kind, "id": self.ident, "current_version": self.current_version}


class InvalidTransition(DomainError):
    def __init__(self, kind: str, ident: str, current: str, target: str) -> None:
        super().__init__(f"{kind} {ident} cannot go from {current} to {target}.")
        self.kind, self.ident, self.current, self.target = kind, ident, current, target

    def extensions(self) -> dict[str, object]:
        return {
            "resource": self.kind,
            "id": self.ident,
            "current_status": self.current,
            "target_status": self.target,
        }


class Contention(DomainError):
    """The write kept colliding with concurrent writes to the same items; safe to retry."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is busy with concurrent changes; retry the request.")


class DependencyUnavailable(DomainError):
    """A service the request needs (DynamoDB, Secrets Manager, ...) was throttled, failing or out of
    reach after every retry the SDK's budget allows (``platform.clients``). The request may be sent
    again as it was: creates carry their Idempotency-Key, other writes are guarded or idempotent."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"A service this request needs is busy or unavailable; retry in {retry_after} s.")
        self.retry_after = retry_after


class SearchUnavailable(DomainError):
    """The search engine cannot be reached, answered an error for the whole request, or is not configured.
    Answered 503 with Retry-After: ``retry_after`` seconds (the breaker's time left while it is open).
    Declared here, not beside the search port, so that the problem table (which every API imports)
    does not import the port: ~5 ms of dataclasses a cold start paid for one error class (decision 238)."""

    def __init__(self, reason: str, retry_after: int = 5) -> None:
        super().__init__("Search is unavailable right now; try again later.")
        self.reason = reason
        self.retry_after = retry_after

    def __str__(self) -> str:
        return self.reason


class UnsupportedMediaType(DomainError):
    def __init__(self) -> None:
        super().__init__("Send the body as application/json (UTF-8).")


class BodyTooLarge(DomainError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"The body is larger than the {limit // 1024} KiB any request needs.")
        self.limit = limit


class MalformedBody(DomainError):
    """A body that cannot be read as one JSON object: bad encoding, bad JSON, or JSON of the wrong kind."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"The body cannot be read: {reason}.")
