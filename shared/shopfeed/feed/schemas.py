"""HTTP request and response models of the feed API (the OpenAPI document is generated from them)."""

from typing import Annotated, Final

from pydantic import BeforeValidator, Field, StringConstraints, WithJsonSchema

from shopfeed.feed.media import MAX_MEDIA_PER_POST, MediaType
from shopfeed.feed.media.services import MediaLink, Upload
from shopfeed.feed.media.storage import UploadForm
from shopfeed.feed.models import (
    MAX_TAGS,
    TAG_PATTERN,
    Comment,
    CommentText,
    Follow,
    LeaderboardEntry,
    Like,
    Notification,
    Post,
    PostSummary,
    PostText,
    Profile,
    normalise_tag,
)
from shopfeed.platform.models import Request, View
from shopfeed.platform.search import SearchHit
from shopfeed.platform.types import MULTI_LINE, EntityId

# A tag as a client may write it ("#DynamoDB"), stored normalised ("dynamodb").
RequestTag = Annotated[str, BeforeValidator(lambda raw: normalise_tag(raw) if isinstance(raw, str) else raw)]
# What a client may send: the stored pattern once trimmed, one leading "#" dropped and lower-cased
# (the document publishes it, not the stored pattern, so clients and fuzzers see what is accepted).
ACCEPTED_TAG_PATTERN: Final = r"^\s*#?[A-Za-z0-9_]{1,50}\s*$"
TagParam = Annotated[
    RequestTag,
    StringConstraints(pattern=TAG_PATTERN),
    WithJsonSchema({"type": "string", "pattern": ACCEPTED_TAG_PATTERN}),
]
# In a path, a tag arrives as written in the URL: any case, no "#" or spaces.
TagPath = Annotated[
    RequestTag,
    StringConstraints(pattern=TAG_PATTERN),
    WithJsonSchema({"type": "string", "pattern": r"^[A-Za-z0-9_]{1,50}$"}),
]


class CreatePost(Request):
    text: Annotated[PostText, MULTI_LINE]
    tags: Annotated[
        list[TagParam],
        Field(max_length=MAX_TAGS, description="Up to 10; '#DynamoDB' is stored as 'dynamodb', repeats once"),
    ] = []
    media_ids: Annotated[
        list[EntityId],
        Field(max_length=MAX_MEDIA_PER_POST, description="Up to 4 distinct media ids of my uploads (POST /media)"),
    ] = []


class PostView(View):
    post_id: str
    author_id: str
    text: str
    tags: list[str]
    created_at: str
    likes_count: int
    comments_count: int
    media: list[MediaLink] = Field(default=[], description="Download links, valid until each expires_at")

    @classmethod
    def of(cls, post: Post, media: list[MediaLink] | None = None) -> "PostView":
        return cls.model_validate({**post.model_dump(include=set(cls.model_fields)), "media": media or []})


class PostPage(View):
    items: list[PostSummary]
    next_cursor: str | None


class PostHit(View):
    """A search result: what a result row shows. Counters are not indexed: GET /posts/{id} has them."""

    post_id: str
    author_id: str
    author_handle: str | None = None
    text: str
    tags: list[str]
    created_at: str
    score: float

    @classmethod
    def of(cls, hit: SearchHit) -> "PostHit":
        return cls.model_validate({**hit.body, "score": hit.score})


class PostSearchPage(View):
    items: list[PostHit]
    next_cursor: str | None


class FeedPage(View):
    items: list[PostView]
    next_cursor: str | None


class FollowPage(View):
    items: list[Follow]
    next_cursor: str | None


class ProfileView(View):
    """FEED-001: the public social profile."""

    user_id: str
    handle: str
    display_name: str
    bio: str
    followers_count: int
    following_count: int
    posts_count: int
    created_at: str

    @classmethod
    def of(cls, profile: Profile) -> "ProfileView":
        return cls.model_validate(profile.model_dump(include=set(cls.model_fields)))


# -- media ----------------------------------------------------------------------------------------


class CreateUpload(Request):
    content_type: Annotated[MediaType, Field(description="The file's type; the form accepts this type only")]


class UploadView(View):
    """A presigned POST: send ``form.fields`` then the file (field ``file``) to ``form.url`` as
    multipart/form-data before ``expires_at``; then name ``media_id`` in a post."""

    media_id: str
    content_type: MediaType
    max_bytes: int
    expires_at: str
    form: UploadForm

    @classmethod
    def of(cls, upload: Upload) -> "UploadView":
        return cls.model_validate(upload.model_dump())


# -- likes, comments, notifications, leaderboard ----------------------------------------------------


class LikePage(View):
    items: list[Like]
    next_cursor: str | None


class CreateComment(Request):
    text: Annotated[CommentText, MULTI_LINE]


class CommentPage(View):
    items: list[Comment]
    next_cursor: str | None


class NotificationPage(View):
    items: list[Notification]
    next_cursor: str | None


class MarkedRead(View):
    marked: int


class Leaderboard(View):
    month: str
    items: list[LeaderboardEntry]
