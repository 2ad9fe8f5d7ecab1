"""The feed context's composition root: settings, clients and the repository, wired once per container.

Routes and tests ask this module; nothing else builds the feed's ports. (The search engine is built
in ``feed.search``, which the stream consumer shares; this module re-exports it.)
"""

from functools import cache
from typing import Annotated

from aws_lambda_powertools.event_handler.depends import Depends

from shopfeed.feed.repository import FeedRepository
from shopfeed.feed.search import search_index as search_index
from shopfeed.feed.services import Feed
from shopfeed.feed.settings import FeedApiSettings
from shopfeed.feed.social import Social
from shopfeed.feed.social_repository import SocialRepository
from shopfeed.platform import clients, dynamo
from shopfeed.platform.config import settings
from shopfeed.platform.cursors import CursorCodec, signing_key


@cache
def cursors() -> CursorCodec:
    """The API's cursor signer (its key is read once per container)."""
    return CursorCodec(signing_key(settings(FeedApiSettings)))


@cache
def feed_store() -> FeedRepository:
    config = settings(FeedApiSettings)
    table = dynamo.Table(clients.dynamodb(), config.feed_table_name)
    return FeedRepository(table, cursors(), config.pull_authors_cache_seconds)


@cache
def social_store() -> SocialRepository:
    config = settings(FeedApiSettings)
    table = dynamo.Table(clients.dynamodb(), config.feed_table_name)
    return SocialRepository(table, cursors())


def celebrity_threshold() -> int:
    threshold: int = settings(FeedApiSettings).celebrity_follower_threshold
    return threshold


def reset() -> None:
    """Forget every port built (tests change the environment between tests)."""
    for factory in (cursors, feed_store, social_store, search_index):
        factory.cache_clear()


Store = Annotated[Feed, Depends(feed_store)]
SocialStore = Annotated[Social, Depends(social_store)]
CelebrityThreshold = Annotated[int, Depends(celebrity_threshold)]
