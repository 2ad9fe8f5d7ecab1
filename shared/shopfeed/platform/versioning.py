"""Optimistic locking over HTTP: ``ETag: "<version>"`` on reads, ``If-Match`` required on writes (RFC 9110)."""

import re

from shopfeed.platform.errors import PreconditionRequired

_ETAG = re.compile(r'^\s*"(\d{1,18})"\s*$')


def etag(version: int) -> str:
    return f'"{version}"'


def expected_version(if_match: str | None) -> int:
    """The version the client read. Missing → 428. Unparseable, weak (``W/``, RFC 9110 compares strongly) or ``*``
    can never match → version 0 (412)."""
    if if_match is None or not if_match.strip():
        raise PreconditionRequired()
    match = _ETAG.match(if_match)
    return int(match.group(1)) if match else 0


def optional_version(if_match: str | None) -> int | None:
    """The version the client read where If-Match is optional: None without the header. Present but
    no strong ETag (blank, weak, ``*``, garbage) → -1, which no version matches, 0 included (412)."""
    if if_match is None:
        return None
    match = _ETAG.match(if_match)
    return int(match.group(1)) if match else -1
