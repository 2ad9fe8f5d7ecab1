"""The feed context's composition root: settings, clients and the repository, wired once per container.

Routes and tests ask this module; nothing else builds the feed's ports.
"""

from functools import cache
from typing import Annotated

from aws_lambda_powertools.event_handler.depends import Depends

from shopfeed.feed.repository import FeedRepository
from shopfeed.feed.services import Feed
from shopfeed.feed.settings import FeedApiSettings
from shopfeed.platform import clients, dynamo
from shopfeed.platform.config import settings
from shopfeed.platform.cursors import CursorCodec, signing_key


@cache
def feed_store() -> FeedRepository:
    config = settings(FeedApiSettings)
    table = dynamo.Table(clients.dynamodb(), config.feed_table_name)
    return FeedRepository(table, CursorCodec(signing_key(config)), config.pull_authors_cache_seconds)


def celebrity_threshold() -> int:
    threshold: int = settings(FeedApiSettings).celebrity_follower_threshold
    return threshold


Store = Annotated[Feed, Depends(feed_store)]
CelebrityThreshold = Annotated[int, Depends(celebrity_threshold)]
