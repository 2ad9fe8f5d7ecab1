"""How the items of one record type become search documents: what a context declares beside its
search mapping, and what the search sync and the rebuild apply.

Its own module, not ``sync``'s: the API's search routes import the context's mapping and projection
together, and ``sync`` brings the task queues and stream records an API never runs (decision 206).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from shopfeed.platform import dynamo
from shopfeed.platform.search import SearchMapping


@dataclass(frozen=True)
class Projection:
    """How the items of one record type are indexed.

    ``document`` maps an item to the document's id and body (raising KeyError or ValueError for an item
    that can never be indexed); ``id_of`` finds the id in any image, a REMOVE's old one included.
    Only versioned changes reach the index: a MODIFY that leaves ``version`` as it was (a stock
    decrement, a counter) changed nothing a document holds.
    """

    spec: SearchMapping
    document: Callable[[dynamo.Item], tuple[str, Mapping[str, Any]]]
    id_of: Callable[[dynamo.Item], str]
    version_attribute: str = "version"
    # How to read the version where the attribute alone will not do (items written before it existed).
    version_of: Callable[[dynamo.Item], int] | None = None

    def version(self, image: dynamo.Item) -> int:
        if self.version_of is not None:
            return self.version_of(image)
        return int(image[self.version_attribute])
