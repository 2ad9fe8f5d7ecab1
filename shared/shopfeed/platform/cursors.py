"""Opaque, signed pagination cursors bound to the query they came from.

A cursor is ``base64url(json) . base64url(hmac)``. The JSON holds the query's scope (for example
``posts-by-user:U100``) and the engine position (DynamoDB's LastEvaluatedKey, or one per shard), so a
cursor from another query or another user, or an edited one, is refused with 400 before any read.
Written by hand because DynamoDB's own key is neither opaque nor tamper-proof.

The key is a ring, so it can be rotated without breaking the cursors clients hold: new cursors are
signed with the current key, and a cursor signed with any accepted key still decodes, until that key is
retired (removed from the ring). The secret's value is either one plain key (a ring of one) or
``{"current": "...", "accepted": ["...", ...]}``. Rotation takes three deploys so that no container
ever meets a cursor signed with a key it does not know (docs/operations.md, "Rotating the cursor key").
"""

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from shopfeed.platform import clients
from shopfeed.platform.config import CursorSettings
from shopfeed.platform.errors import InvalidCursor

# A ring holds the key in use and the few coming in or going out; a decode tries each (one HMAC apiece).
MAX_ACCEPTED_KEYS = 3


@dataclass(frozen=True)
class KeyRing:
    current: bytes
    accepted: tuple[bytes, ...] = ()

    @property
    def verifying(self) -> tuple[bytes, ...]:
        return (self.current, *self.accepted)


def parse_key_ring(secret: str) -> KeyRing:
    """A plain key, or the JSON ring ``{"current": ..., "accepted": [...]}``. Raises ValueError."""
    if not secret.lstrip().startswith("{"):
        return KeyRing(secret.encode())
    try:
        document = json.loads(secret)
    except ValueError:
        document = None
    shape = 'a cursor key ring is {"current": "<key>", "accepted": ["<key>", ...]}'
    if not isinstance(document, dict):
        raise ValueError(shape)
    current, accepted = document.get("current"), document.get("accepted", [])
    if not (isinstance(current, str) and current and isinstance(accepted, list)):
        raise ValueError(shape)
    if not all(isinstance(key, str) and key for key in accepted) or len(accepted) > MAX_ACCEPTED_KEYS:
        raise ValueError(f"a cursor key ring accepts at most {MAX_ACCEPTED_KEYS} other keys, each a string")
    return KeyRing(current.encode(), tuple(key.encode() for key in accepted))


def signing_keys(config: CursorSettings) -> KeyRing:
    if config.cursor_secret:
        return parse_key_ring(config.cursor_secret)
    if config.cursor_secret_arn:
        return parse_key_ring(clients.secret_string(config.cursor_secret_arn))
    raise RuntimeError("configure CURSOR_SECRET or CURSOR_SECRET_ARN")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CursorCodec:
    def __init__(self, keys: KeyRing | bytes) -> None:
        self._keys = keys if isinstance(keys, KeyRing) else KeyRing(keys)

    @staticmethod
    def _sign(key: bytes, payload: bytes) -> bytes:
        return hmac.new(key, payload, hashlib.sha256).digest()

    def encode(self, scope: str, position: Any) -> str:
        payload = json.dumps({"s": scope, "p": position}, separators=(",", ":"), sort_keys=True).encode()
        return f"{_b64(payload)}.{_b64(self._sign(self._keys.current, payload))}"

    def decode(self, scope: str, cursor: str | None) -> Any:
        """The position stored in ``cursor``, or None for the first page. Raises InvalidCursor."""
        if cursor is None:
            return None
        try:
            body, signature = cursor.split(".")
            payload, claimed = _unb64(body), _unb64(signature)
            valid = any(hmac.compare_digest(claimed, self._sign(key, payload)) for key in self._keys.verifying)
            document = json.loads(payload) if valid else None
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise InvalidCursor() from None
        if not isinstance(document, dict) or document.get("s") != scope:
            raise InvalidCursor()
        return document.get("p")
