"""The feed context's composition root: settings, clients, repositories, queues and search index,
wired once per container. The API's routes, the stream consumer's handlers, the fanout worker and
the tests ask this module; nothing else builds a feed port.

Everything is built on first use and kept for the container's life (clients come from the
platform's per-container factories); ``reset`` forgets it (tests switch environments between tests).
"""

from functools import cache
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from shopfeed.feed.settings import FanoutSettings, FeedApiSettings, FeedSettings, MediaSettings
from shopfeed.platform import clients
from shopfeed.platform.config import settings
from shopfeed.platform.observability import logger

# The repositories and the other ports are imported inside the factories that build them, as in
# commerce.bootstrap (decision 214): priming builds them at init in Lambda, the import does not.
if TYPE_CHECKING:
    from shopfeed.feed.engagement.repository import EngagementRepository
    from shopfeed.feed.home.backfill import FollowTask
    from shopfeed.feed.home.fanout import FanoutRepository, FanoutTask
    from shopfeed.feed.media.storage import S3Media
    from shopfeed.feed.repository import FeedRepository
    from shopfeed.platform import dynamo
    from shopfeed.platform.cursors import CursorCodec
    from shopfeed.platform.pagination import Reader
    from shopfeed.platform.queues import SqsTaskQueue
    from shopfeed.platform.search import SearchIndex
    from shopfeed.platform.search.sync import IndexWrite


@cache
def table() -> "dynamo.Table":
    """FeedTable, as every feed function reads and writes it."""
    from shopfeed.platform import dynamo

    return dynamo.Table(clients.dynamodb(), settings(FeedSettings).feed_table_name)


# Search, once per container (None when the stack has none: search is off): the engine as the API's
# routes ask it (its budget, behind a breaker), and the queue the stream consumer puts index writes on.
@cache
def api_search_index() -> "SearchIndex | None":
    """The engine as the API's search routes ask it (None when search is off)."""
    from shopfeed.platform.search import engine

    return engine.for_api()


def warm_search() -> None:
    """At init (``warmup.prime``'s ``connections``): the API's connection to the engine opened, where
    search is on (``SearchIndex.warm_up``, decision 268)."""
    search = api_search_index()
    if search is not None:
        from shopfeed.feed.posts.search import POSTS

        search.warm_up(POSTS)


@cache
def search_sync_queue() -> "SqsTaskQueue[IndexWrite] | None":
    """The queue the stream consumer puts index writes on (None when search is off)."""
    # Imported here, as the fanout's ports below: the API imports this module, and the task queues
    # bring the stream-record machinery (Powertools' data classes) an API never runs (decision 206).
    from shopfeed.platform.search import sync

    return sync.queue()


# -- the API -------------------------------------------------------------------------------------


@cache
def cursors() -> "CursorCodec":
    """The API's cursor signer (its key is read once per container)."""
    from shopfeed.platform.cursors import CursorCodec, signing_keys

    return CursorCodec(signing_keys(settings(FeedApiSettings)))


@cache
def feed_store() -> "FeedRepository":
    """Profiles, posts, follows and the home feed, for the API."""
    from shopfeed.feed.repository import FeedRepository

    return FeedRepository(table(), cursors(), settings(FeedApiSettings).pull_authors_cache_seconds)


@cache
def reader() -> "Reader":
    """FeedTable and the cursor signer, for the GET routes that call ``feed.queries`` directly."""
    from shopfeed.platform.pagination import Reader

    return Reader(table(), cursors())


@cache
def engagement_store() -> "EngagementRepository":
    """Likes, comments, notifications and the leaderboard, for the API."""
    from shopfeed.feed.engagement.repository import EngagementRepository

    return EngagementRepository(table(), cursors())


@cache
def media_storage() -> "S3Media":
    """The media bucket: upload forms, the post-time checks and copies, download links."""
    from shopfeed.feed.media.storage import S3Media

    return S3Media(clients.s3(), settings(MediaSettings).media_bucket_name)


def pull_author_registry() -> None:
    """The pull-author registry, read before the first home feed asks for it (decision 207). Best effort:
    a read that fails is logged and leaves it to the first request, as an unprimed container would."""
    try:
        feed_store().refresh_pull_authors()
    except (BotoCoreError, ClientError) as error:
        logger.warning("pull-author registry not primed", error=str(error))


def dry_runs() -> None:
    """The DynamoDB operations of the API's routes, once each on FeedTable, answered in process: priming
    botocore without a call (decision 216)."""
    from shopfeed.platform import warmup

    warmup.dry_run_dynamodb(table())


def celebrity_threshold() -> int:
    threshold: int = settings(FeedApiSettings).celebrity_follower_threshold
    return threshold


# -- the stream consumer and the fanout worker -----------------------------------------------------


@cache
def fanout_queue() -> "SqsTaskQueue[FanoutTask | FollowTask]":
    """The fanout queue, as the stream consumer starts a post's fanout (or a follow's backfill or
    cleanup) and the worker continues it."""
    from shopfeed.platform.queues import SqsTaskQueue

    return SqsTaskQueue(clients.sqs(), settings(FanoutSettings).fanout_queue_url)


@cache
def fanout_store() -> "FanoutRepository":
    """FeedTable as the fanout worker pages followers and writes their entries."""
    from shopfeed.feed.home.fanout import FanoutRepository

    return FanoutRepository(table())


def fanout_page_size() -> int:
    size: int = settings(FanoutSettings).fanout_page_size
    return size


def follow_backfill_posts() -> int:
    posts: int = settings(FanoutSettings).follow_backfill_posts
    return posts


# What each function's first request needs: built at init (``platform.warmup``); the search engine's
# client where search is configured (decision 240).
API_PORTS = (feed_store, engagement_store, reader, api_search_index)
# What init reads for the first request, and a SnapStart restore reads again (the snapshot's copy is as
# old as the published version): one Query per cold start (decision 207).
API_READS = (pull_author_registry,)
# What the API's routes depend on but is made on first use: an S3 client costs 110-160 ms to make and
# only the media routes and posts with media use it; an init that made it would slow every cold start.
API_PORTS_ON_FIRST_USE = (media_storage,)
STREAM_PORTS = (table, fanout_queue, search_sync_queue)
WORKER_PORTS = (fanout_store, fanout_queue)


def reset() -> None:
    """Forget every port built (tests change the environment between tests)."""
    for factory in (
        table,
        search_sync_queue,
        api_search_index,
        cursors,
        reader,
        feed_store,
        engagement_store,
        media_storage,
        fanout_queue,
        fanout_store,
    ):
        factory.cache_clear()
