"""Opaque, signed pagination cursors bound to the query they came from.

A cursor is ``base64url(json) . base64url(hmac)``. The JSON holds the query's scope (for example
``posts-by-user:U100``) and the engine position (DynamoDB's LastEvaluatedKey, or one per shard), so a
cursor from another query or another user, or an edited one, is refused with 400 before any read.
Written by hand because DynamoDB's own key is neither opaque nor tamper-proof.
"""

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any

from shopfeed.platform import clients
from shopfeed.platform.config import CursorSettings
from shopfeed.platform.errors import InvalidCursor


def signing_key(config: CursorSettings) -> bytes:
    if config.cursor_secret:
        return config.cursor_secret.encode()
    if config.cursor_secret_arn:
        return clients.secret_string(config.cursor_secret_arn).encode()
    raise RuntimeError("configure CURSOR_SECRET or CURSOR_SECRET_ARN")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CursorCodec:
    def __init__(self, key: bytes) -> None:
        self._key = key

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()

    def encode(self, scope: str, position: Any) -> str:
        payload = json.dumps({"s": scope, "p": position}, separators=(",", ":"), sort_keys=True).encode()
        return f"{_b64(payload)}.{_b64(self._sign(payload))}"

    def decode(self, scope: str, cursor: str | None) -> Any:
        """The position stored in ``cursor``, or None for the first page. Raises InvalidCursor."""
        if cursor is None:
            return None
        try:
            body, signature = cursor.split(".")
            payload = _unb64(body)
            valid = hmac.compare_digest(_unb64(signature), self._sign(payload))
            document = json.loads(payload) if valid else None
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise InvalidCursor() from None
        if not isinstance(document, dict) or document.get("s") != scope:
            raise InvalidCursor()
        return document.get("p")
