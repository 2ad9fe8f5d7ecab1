"""Use cases of media: give an upload form, keep the uploads a post names, link a post's media."""

from datetime import timedelta
from http import HTTPStatus

from shopfeed.feed.media import (
    DOWNLOAD_EXPIRY_SECONDS,
    MAX_MEDIA_BYTES,
    UPLOAD_EXPIRY_SECONDS,
    MediaRef,
    MediaType,
    kept_key,
    owner_of,
    upload_key,
)
from shopfeed.feed.media.storage import MediaStorage, UploadForm
from shopfeed.platform import problems
from shopfeed.platform.clock import iso, new_id, utc_now
from shopfeed.platform.errors import DomainError, InvalidRequest
from shopfeed.platform.models import Model


class MediaUnusable(DomainError):
    """A media id a post names that is not a usable upload of its author: none under the author's
    uploads (never uploaded, expired, or another user's: the same answer, so ids of other users'
    uploads reveal nothing), or an object that is not what the form allowed."""

    def __init__(self, media_id: str, reason: str) -> None:
        super().__init__(f"Media {media_id} cannot be used: {reason}.")
        self.media_id, self.reason = media_id, reason

    def extensions(self) -> dict[str, object]:
        return {"media_id": self.media_id}


problems.register(MediaUnusable, HTTPStatus.UNPROCESSABLE_ENTITY, "media-unusable", "Media unusable")


class Upload(Model):
    media_id: str
    content_type: MediaType
    max_bytes: int
    expires_at: str
    form: UploadForm


class MediaLink(Model):
    media_id: str
    content_type: MediaType
    size_bytes: int
    url: str
    expires_at: str


def request_upload(storage: MediaStorage, user_id: str, content_type: MediaType) -> Upload:
    """A presigned form for one file under the caller's uploads. Nothing is stored: an unused form
    expires, an upload no post names is deleted by the bucket's lifecycle rule."""
    moment = utc_now()
    media_id = new_id(moment)
    form = storage.upload_form(upload_key(user_id, media_id), content_type, owner_of(user_id), UPLOAD_EXPIRY_SECONDS)
    return Upload(
        media_id=media_id,
        content_type=content_type,
        max_bytes=MAX_MEDIA_BYTES,
        expires_at=iso(moment + timedelta(seconds=UPLOAD_EXPIRY_SECONDS)),
        form=form,
    )


def keep_uploads(storage: MediaStorage, author_id: str, media_ids: tuple[str, ...]) -> tuple[MediaRef, ...]:
    """Check every upload a new post names, then copy each out of the lifecycle rule's reach.

    All are checked before any is copied: a refused post copies nothing. S3 enforced the form's
    policy on the way in; size and type are read again from the object (HeadObject), as S3 holds
    them, so an object written some other way under the prefix is refused too.
    """
    if len(set(media_ids)) != len(media_ids):
        raise InvalidRequest("A post names each media id once.")
    refs = tuple(_checked(storage, author_id, media_id) for media_id in media_ids)
    for ref in refs:
        # Copying again (a retried post) writes the same object: the copy is idempotent.
        storage.copy(upload_key(author_id, ref.media_id), kept_key(author_id, ref.media_id))
    return refs


def _checked(storage: MediaStorage, author_id: str, media_id: str) -> MediaRef:
    found = storage.head(upload_key(author_id, media_id))
    if found is None:
        raise MediaUnusable(media_id, "no upload of yours has this id (or it expired)")
    if found.owner != owner_of(author_id):
        raise MediaUnusable(media_id, "it was not uploaded through a form given to you")
    if found.content_type not in tuple(MediaType):
        raise MediaUnusable(media_id, f"its content type {found.content_type!r} is not accepted")
    if not 0 < found.size_bytes <= MAX_MEDIA_BYTES:
        raise MediaUnusable(media_id, f"its size {found.size_bytes} is outside 1..{MAX_MEDIA_BYTES} bytes")
    return MediaRef(media_id=media_id, content_type=MediaType(found.content_type), size_bytes=found.size_bytes)


def links(storage: MediaStorage, author_id: str, refs: tuple[MediaRef, ...]) -> list[MediaLink]:
    """Presigned GETs of a post's media: signed here, no call to S3 (a post without media costs nothing)."""
    expires_at = iso(utc_now() + timedelta(seconds=DOWNLOAD_EXPIRY_SECONDS))
    return [
        MediaLink(
            media_id=ref.media_id,
            content_type=ref.content_type,
            size_bytes=ref.size_bytes,
            url=storage.download_url(kept_key(author_id, ref.media_id), DOWNLOAD_EXPIRY_SECONDS),
            expires_at=expires_at,
        )
        for ref in refs
    ]
