"""The parts every context's ``keys`` module builds its keys from: escaped free text, write shards,
index key pairs, newest-first sort keys and prefix parsers. The formats stay in the keys modules;
only the mechanics are shared, so two tables cannot drift in how they shard or sort.

Free text (a token's subject) inside a composite DynamoDB key, where ``#`` separates the parts:
``#`` and ``%`` are percent-encoded, nothing else. The encoding is injective (two texts never share an
encoding) and an encoded part holds no ``#``, so text can neither end its part early nor spell another
key. Text without either character is unchanged, so keys of plain ids read as before.
"""

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # For a type only: the idempotency record's key escapes a subject here, and routes import that
    # module without the DynamoDB gateway (decision 214).
    from shopfeed.platform.dynamo import IndexSpec

Key = dict[str, str]


def escape(text: str) -> str:
    return text.replace("%", "%25").replace("#", "%23")


def shard(ident: str, shards: int) -> int:
    """The write shard of ``ident`` among ``shards``: a stable hash (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.sha256(ident.encode()).digest()[:4], "big") % shards


def index_key(index: "IndexSpec", partition: str, sort: str) -> Key:
    """The two attributes an item carries to appear in ``index``."""
    return {index.partition_key: partition, index.sort_key: sort}


def newest_first(at: str, ident: str) -> str:
    """``<ISO-8601 UTC time>#<id>``: sorts as text in time order, the id breaking ties (read it
    descending for newest first)."""
    return f"{at}#{ident}"


def after_prefix(value: str, prefix: str, kind: str) -> str:
    """What follows ``prefix`` in a key attribute; ``ValueError`` naming ``kind`` ("an order") if the
    value is not such a key (a stream consumer read a record it should not have been given)."""
    if not value.startswith(prefix):
        raise ValueError(f"not {kind} key: {value}")
    return value.removeprefix(prefix)
