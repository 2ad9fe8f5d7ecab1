"""HTTP routes of the feed API, one Router per resource; functions/feed_api wires them.

``Store``, ``EngagementStore``, ``Reader`` and ``CelebrityThreshold`` are what routes depend on: the
ports the composition root builds (Powertools Depends). A GET route that only reads takes the
``Reader`` and calls ``feed.queries``.
"""

from typing import Annotated

from aws_lambda_powertools.event_handler.depends import Depends

from shopfeed.feed import bootstrap
from shopfeed.feed.engagement.services import Engagement
from shopfeed.feed.services import Feed
from shopfeed.platform import pagination

Store = Annotated[Feed, Depends(bootstrap.feed_store)]
EngagementStore = Annotated[Engagement, Depends(bootstrap.engagement_store)]
CelebrityThreshold = Annotated[int, Depends(bootstrap.celebrity_threshold)]
Reader = Annotated[pagination.Reader, Depends(bootstrap.reader)]
