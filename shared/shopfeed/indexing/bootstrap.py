"""The search sync worker's composition root: the indexes it writes, by alias, and its engine and
queue, built once per container. ``reset`` forgets them (tests switch environments between tests)."""

from collections.abc import Mapping
from functools import cache
from typing import Annotated, Final

from pydantic import Field

from shopfeed.commerce.catalog.search import PRODUCTS
from shopfeed.feed.posts.search import POSTS
from shopfeed.platform import clients
from shopfeed.platform.config import SearchSettings, settings
from shopfeed.platform.queues import SqsTaskQueue
from shopfeed.platform.search import SearchMapping
from shopfeed.platform.search import engine as search_engine
from shopfeed.platform.search.sync import IndexWrite

# A queued write names its index by alias; the worker needs the mapping to create an index on first
# use (writing to a missing alias would let the engine guess one).
INDEXES: Final[Mapping[str, SearchMapping]] = {spec.alias: spec for spec in (PRODUCTS, POSTS)}


class SearchSyncWorkerSettings(SearchSettings):
    # The queue the worker reads, where it holds back the writes the engine could not take.
    search_sync_queue_url: Annotated[str, Field(min_length=1)]


# The engine with the workers' budget (None when the stack has none: the worker acknowledges all).
engine = cache(search_engine.configured)


@cache
def queue() -> SqsTaskQueue[IndexWrite]:
    """The search sync queue, as the worker holds failed writes back on it."""
    return SqsTaskQueue(clients.sqs(), settings(SearchSyncWorkerSettings).search_sync_queue_url)


# What the worker's first request needs: built at init (``platform.warmup``).
WORKER_PORTS = (engine, queue)


def reset() -> None:
    """Forget every port built (tests change the environment between tests)."""
    for factory in WORKER_PORTS:
        factory.cache_clear()
