"""Free text (a token's subject) inside a composite DynamoDB key, where ``#`` separates the parts.

``#`` and ``%`` are percent-encoded, nothing else: the encoding is injective (two texts never share an
encoding) and an encoded part holds no ``#``, so text can neither end its part early nor spell another
key. Text without either character is unchanged, so keys of plain ids read as before.
"""

import hashlib
from typing import Final

# A sort key holds at most 1,024 bytes (DynamoDB), an escaped subject up to 1,020: where a subject
# shares a sort key with other parts, a longer one is replaced by its digest (``bounded``).
MAX_BOUNDED_BYTES: Final = 512
_DIGEST: Final = "%%"


def escape(text: str) -> str:
    return text.replace("%", "%25").replace("#", "%23")


def bounded(text: str, max_bytes: int = MAX_BOUNDED_BYTES) -> str:
    """``escape(text)`` if it fits in ``max_bytes`` of UTF-8, else ``%%`` and the text's SHA-256.

    Still injective (up to SHA-256 collisions): an escaped text never holds ``%%`` (each ``%`` it
    holds starts ``%25`` or ``%23``), so a digest never meets an escaped text.
    """
    escaped = escape(text)
    if len(escaped.encode()) <= max_bytes:
        return escaped
    return _DIGEST + hashlib.sha256(text.encode()).hexdigest()
