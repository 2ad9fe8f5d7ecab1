"""Objects in a bucket, written so that a confirmed write means the bytes stored are the bytes sent.

``put`` sends ``Content-MD5``: S3 refuses the request (BadDigest) if the body it received differs,
so a 200 is the confirmation a caller may act on (delete the source, say), and the MD5 it returns
is what a caller keeps to recognise the object later. S3 reads are strongly consistent after a write.
"""

import base64
import hashlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


class ObjectMissing(Exception):
    """No object under the key: what a caller recorded as written is gone."""

    def __init__(self, key: str) -> None:
        super().__init__(f"no object {key}")
        self.key = key


def md5_hex(body: bytes) -> str:
    # Not a security digest: S3's integrity check (Content-MD5) and the record of what was written.
    return hashlib.md5(body, usedforsecurity=False).hexdigest()


class ObjectStore(Protocol):
    """A bucket (S3Objects, or an in-memory fake in unit tests)."""

    def put(self, key: str, body: bytes, content_type: str, metadata: Mapping[str, str]) -> str:
        """Write ``body`` under ``key`` (replacing what was there); its MD5 (hex) once S3 confirmed it."""
        ...

    def get(self, key: str) -> bytes:
        """The object's bytes (its current version); raises ObjectMissing."""
        ...


class S3Objects:
    """One S3 bucket through the low-level client."""

    def __init__(self, client: "S3Client", bucket: str) -> None:
        self.client = client
        self.bucket = bucket

    def put(self, key: str, body: bytes, content_type: str, metadata: Mapping[str, str]) -> str:
        digest = hashlib.md5(body, usedforsecurity=False).digest()
        self.client.put_object(
            Bucket=self.bucket,
            Key=key,
            Body=body,
            ContentMD5=base64.b64encode(digest).decode(),
            ContentType=content_type,
            Metadata=dict(metadata),
        )
        return digest.hex()

    def get(self, key: str) -> bytes:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except ClientError as error:
            if error.response["Error"]["Code"] in ("NoSuchKey", "404"):
                raise ObjectMissing(key) from error
            raise

    def keys(self, prefix: str) -> Iterator[str]:
        """The keys of the objects under ``prefix``, in key order."""
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            yield from (entry["Key"] for entry in page.get("Contents", []))
