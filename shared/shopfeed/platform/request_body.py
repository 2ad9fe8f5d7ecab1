"""The one way a request body is read: a JSON object sent as application/json, or nothing.

Powertools parses bodies itself, but lets a multipart body without a boundary, an integer past
Python's 4,300-digit limit or invalid UTF-8 escape as a 500, answers a refused media type in its own
JSON shape and refuses ``APPLICATION/JSON``. This reads the body once, strictly, for every route.
"""

import base64
import binascii
import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from shopfeed.platform.errors import BodyTooLarge, MalformedBody, UnsupportedMediaType

JSON_MEDIA_TYPE = "application/json"
# Bounds read before any schema is: the largest body a route takes is a product with a 4,000-character
# description (under 20 KB), and no request model has more than a dozen fields. A body past either
# bound is refused at once, so no request can make the validator list a million errors.
MAX_BODY_BYTES = 64 * 1024
MAX_OBJECT_MEMBERS = 32


def json_object_body(headers: Mapping[str, str], body: str | None, base64_encoded: bool) -> dict[str, Any] | None:
    """The body as a JSON object, or None when there is none. Raises 415 or 400 domain errors."""
    if not body:
        return None
    _require_json_media_type(headers)
    raw = _bytes(body, base64_encoded)
    if len(raw) > MAX_BODY_BYTES:
        raise BodyTooLarge(MAX_BODY_BYTES)
    document = _parse(_text(raw))
    if not isinstance(document, dict):
        raise MalformedBody("it must be a JSON object")
    try:
        # "\ud800" is valid JSON syntax for no character at all; nothing downstream could store it.
        json.dumps(document, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        raise MalformedBody("a string escapes a lone UTF-16 surrogate") from None
    return document


def _require_json_media_type(headers: Mapping[str, str]) -> None:
    # Media types and parameter names are case-insensitive (RFC 9110 §8.3.1); JSON is UTF-8 (RFC 8259).
    value = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    # A compressed body is not JSON the service can read: say so (415), do not guess.
    encoding = next((v for k, v in headers.items() if k.lower() == "content-encoding"), "identity")
    if encoding.strip().lower() != "identity":
        raise UnsupportedMediaType()
    media_type, *parameters = [part.strip().lower() for part in value.split(";")]
    if media_type != JSON_MEDIA_TYPE:
        raise UnsupportedMediaType()
    for parameter in parameters:
        name, _, charset = parameter.partition("=")
        if name.strip() == "charset" and charset.strip().strip('"') not in ("utf-8", "utf8"):
            raise UnsupportedMediaType()


def _bytes(body: str, base64_encoded: bool) -> bytes:
    try:
        return base64.b64decode(body, validate=True) if base64_encoded else body.encode("utf-8")
    except (binascii.Error, UnicodeError):
        raise MalformedBody("it is not UTF-8 text") from None


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeError:
        raise MalformedBody("it is not UTF-8 text") from None


def _parse(text: str) -> Any:
    try:
        # Decimal, not float: 499.9999999999999999 is not 500 (a float rounds it before the integer check).
        return json.loads(text, parse_float=Decimal, parse_constant=_no_constant, object_pairs_hook=_unique_members)
    except json.JSONDecodeError:
        raise MalformedBody("it is not valid JSON") from None
    except ValueError:  # an integer past sys.get_int_max_str_digits() (4,300 digits)
        raise MalformedBody("a number has too many digits") from None
    except RecursionError:
        raise MalformedBody("it nests too deeply") from None


def _no_constant(name: str) -> None:
    raise MalformedBody(f"{name} is not a JSON number")


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Duplicate names are legal JSON with no agreed meaning: two readers may see two different requests.
    if len(pairs) > MAX_OBJECT_MEMBERS:
        raise MalformedBody(f"an object has more than {MAX_OBJECT_MEMBERS} members, more than any request has")
    document = dict(pairs)
    if len(document) != len(pairs):
        raise MalformedBody("a member name appears twice")
    return document
