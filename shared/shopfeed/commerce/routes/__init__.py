"""HTTP routes of the commerce API, one Router per resource; functions/commerce_api wires them.

``Store`` is what a route depends on: the repository the composition root builds (Powertools Depends).
"""

from typing import Annotated

from aws_lambda_powertools.event_handler.depends import Depends

from shopfeed.commerce import bootstrap
from shopfeed.commerce.orders.services import Commerce

Store = Annotated[Commerce, Depends(bootstrap.repository)]
