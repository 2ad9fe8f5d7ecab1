"""The media bucket: presigned forms and links (signed locally, no call to S3), HEAD and copy."""

from typing import TYPE_CHECKING, Any, Protocol

from botocore.exceptions import ClientError

from shopfeed.feed.media import MAX_MEDIA_BYTES, OWNER_METADATA
from shopfeed.platform.models import Model

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


class UploadForm(Model):
    """Where and how to POST the file: the form's fields go first, the file last (S3's rule)."""

    url: str
    fields: dict[str, str]


class StoredObject(Model):
    """What HeadObject says of an upload."""

    size_bytes: int
    content_type: str
    owner: str | None


class MediaStorage(Protocol):
    """The media bucket (S3Media, or an in-memory fake in unit tests)."""

    def upload_form(self, key: str, content_type: str, owner: str, expires_in: int) -> UploadForm: ...
    def head(self, key: str) -> StoredObject | None: ...
    def copy(self, source_key: str, key: str) -> None: ...
    def download_url(self, key: str, expires_in: int) -> str: ...


class S3Media:
    def __init__(self, client: "S3Client", bucket: str) -> None:
        self.client = client
        self.bucket = bucket

    def upload_form(self, key: str, content_type: str, owner: str, expires_in: int) -> UploadForm:
        # The policy is what S3 checks when the form arrives: this key only, this content type only,
        # 1 byte to the cap, the owner's metadata, and the expiry. Every field the client sends must be
        # named in it (S3 refuses a form with an extra field), so the client cannot add its own.
        fields = {"Content-Type": content_type, f"x-amz-meta-{OWNER_METADATA}": owner}
        conditions: list[Any] = [
            {"Content-Type": content_type},
            {f"x-amz-meta-{OWNER_METADATA}": owner},
            ["content-length-range", 1, MAX_MEDIA_BYTES],
        ]
        presigned = self.client.generate_presigned_post(
            self.bucket, key, Fields=fields, Conditions=conditions, ExpiresIn=expires_in
        )
        return UploadForm(url=presigned["url"], fields=presigned["fields"])

    def head(self, key: str) -> StoredObject | None:
        try:
            found = self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as error:
            # HEAD answers have no body: a missing key is a bare 404 (403 if the role could not list).
            if error.response["Error"]["Code"] in ("404", "NoSuchKey", "NotFound"):
                return None
            raise
        return StoredObject(
            size_bytes=found["ContentLength"],
            content_type=found.get("ContentType", ""),
            owner=found.get("Metadata", {}).get(OWNER_METADATA),
        )

    def copy(self, source_key: str, key: str) -> None:
        # Server-side (no bytes through the function); one CopyObject call copies up to 5 GB, far above
        # the cap. Content type and metadata are copied with the object (MetadataDirective COPY).
        self.client.copy_object(Bucket=self.bucket, Key=key, CopySource={"Bucket": self.bucket, "Key": source_key})

    def download_url(self, key: str, expires_in: int) -> str:
        url: str = self.client.generate_presigned_url(
            "get_object", Params={"Bucket": self.bucket, "Key": key}, ExpiresIn=expires_in
        )
        return url
