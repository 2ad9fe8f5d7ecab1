"""Media of posts (the playbook's ``media_ref``): uploads straight to S3 through a presigned POST, checked
and kept when a post names them, read back through presigned GETs. The table stores references only.

The bucket's layout (its lifecycle rule depends on it, see template.yaml ``MediaBucket``):

- ``uploads/<user_id>/<media_id>``: what a presigned form wrote. Nothing refers to it; the lifecycle
  rule deletes it a day later, so an upload no post names (an orphan) costs a day of storage.
- ``media/<user_id>/<media_id>``: the copy a post keeps, outside the rule; the post's ``media_ref``
  names it by (author, media id).
"""

from enum import StrEnum
from typing import Final
from urllib.parse import quote

from shopfeed.platform.models import Model
from shopfeed.platform.types import EntityId

MAX_MEDIA_PER_POST: Final = 4
# Images and short clips of a reference service; the POST policy refuses more, S3 enforces it.
MAX_MEDIA_BYTES: Final = 10 * 1024 * 1024
# Long enough for a phone on a slow network to send 10 MiB; short, since a leaked form writes until then.
UPLOAD_EXPIRY_SECONDS: Final = 600
# A page that shows a post is read for minutes; a link copied out of it stops working soon after.
DOWNLOAD_EXPIRY_SECONDS: Final = 900

UPLOADS_PREFIX: Final = "uploads/"
KEPT_PREFIX: Final = "media/"
# Object metadata the policy makes the uploader send (x-amz-meta-owner): who the form was given to.
OWNER_METADATA: Final = "owner"


class MediaType(StrEnum):
    """The content types a form accepts (one per form: the POST policy names it exactly)."""

    JPEG = "image/jpeg"
    PNG = "image/png"
    WEBP = "image/webp"
    MP4 = "video/mp4"


class MediaRef(Model):
    """A post's reference to one kept object: the playbook's ``media_ref``, a list of these on the post."""

    media_id: EntityId
    content_type: MediaType
    size_bytes: int


def owner_of(user_id: str) -> str:
    """A user id as keys and the owner metadata hold it: percent-encoded, so any subject (Unicode,
    spaces, ``/``) is one ASCII path segment (S3 metadata is ASCII) and ``a/b`` never reads as ``a``."""
    return quote(user_id, safe="")


def upload_key(user_id: str, media_id: str) -> str:
    return f"{UPLOADS_PREFIX}{owner_of(user_id)}/{media_id}"


def kept_key(user_id: str, media_id: str) -> str:
    return f"{KEPT_PREFIX}{owner_of(user_id)}/{media_id}"
