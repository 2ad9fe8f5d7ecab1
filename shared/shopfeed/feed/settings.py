"""Configuration of the feed functions (read lazily, see platform.config)."""

from typing import Annotated, Final

from pydantic import Field

from shopfeed.platform.config import CursorSettings, Settings


class FeedSettings(Settings):
    feed_table_name: Annotated[str, Field(min_length=3)]
    # An author with at least this many followers is a celebrity: their new posts are not fanned out
    # but merged into followers' home feeds at read time. Read by the post service, which records the
    # decision on the post (``delivery``); consumers follow the record, never the setting.
    celebrity_follower_threshold: Annotated[int, Field(ge=1)] = 25_000


class FeedApiSettings(FeedSettings, CursorSettings):
    # The home feed's list of authors merged at read time, kept per container (see FeedRepository).
    pull_authors_cache_seconds: Annotated[float, Field(ge=0)] = 30


class MediaSettings(Settings):
    """The feed API's media bucket (``shopfeed.feed.media``), read when a route first needs it."""

    media_bucket_name: Annotated[str, Field(min_length=3)]


# Followers per fanout task: one Query page (a follow edge is ~300 bytes, far below the 1 MB page
# limit) and 40 BatchWriteItem calls, a few seconds of work at most for one invocation.
FANOUT_PAGE_SIZE: Final = 1000


class FanoutSettings(FeedSettings):
    """The feed stream consumer and the fanout worker: the table and the fanout queue."""

    fanout_queue_url: Annotated[str, Field(min_length=1)]
    fanout_page_size: Annotated[int, Field(ge=1, le=FANOUT_PAGE_SIZE)] = FANOUT_PAGE_SIZE
    # A new follower's feed gets the followee's newest posts of the retention window, this many at most
    # (0: none): one Query, one BatchGetItem of 100 keys at most, one or few BatchWriteItem calls.
    follow_backfill_posts: Annotated[int, Field(ge=0, le=100)] = 20
