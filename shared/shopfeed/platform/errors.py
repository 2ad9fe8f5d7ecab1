"""Typed errors. Each carries the data a client needs; ``problems`` maps them to HTTP once.

Services and repositories raise these; nothing below the HTTP edge knows about status codes.
"""

from collections.abc import Sequence
from dataclasses import dataclass


class DomainError(Exception):
    """Base of every error a client may see. ``detail`` is the human sentence; extra fields are data."""

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


@dataclass(frozen=True)
class StockShortage:
    product_id: str
    requested: int
    available: int


class InsufficientStock(DomainError):
    def __init__(self, shortages: Sequence[StockShortage]) -> None:
        ids = ", ".join(s.product_id for s in shortages)
        super().__init__(f"Not enough stock for {ids}; nothing was ordered.")
        self.shortages = list(shortages)

    def extensions(self) -> dict[str, object]:
        return {
            "products": [
                {"product_id": s.product_id, "requested": s.requested, "available": s.available} for s in self.shortages
            ]
        }


@dataclass(frozen=True)
class PriceChange:
    product_id: str
    quoted: dict[str, object]
    current: dict[str, object]


class PriceChanged(DomainError):
    def __init__(self, changes: Sequence[PriceChange]) -> None:
        ids = ", ".join(c.product_id for c in changes)
        super().__init__(f"The price of {ids} is not the one you quoted; nothing was ordered.")
        self.changes = list(changes)

    def extensions(self) -> dict[str, object]:
        return {
            "products": [
                {"product_id": c.product_id, "quoted_unit_price": c.quoted, "current_unit_price": c.current}
                for c in self.changes
            ]
        }


class UnknownProducts(DomainError):
    def __init__(self, product_ids: Sequence[str]) -> None:
        super().__init__(f"No such product: {', '.join(product_ids)}; nothing was ordered.")
        self.product_ids = list(product_ids)

    def extensions(self) -> dict[str, object]:
        return {"product_ids": self.product_ids}


class Contention(DomainError):
    """The write kept colliding with concurrent writes to the same items; safe to retry."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is busy with concurrent changes; retry the request.")


class UnsupportedMediaType(DomainError):
    def __init__(self) -> None:
        super().__init__("Send the body as application/json (UTF-8).")


class MalformedBody(DomainError):
    """A body that cannot be read as one JSON object: bad encoding, bad JSON, or JSON of the wrong kind."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"The body cannot be read: {reason}.")
