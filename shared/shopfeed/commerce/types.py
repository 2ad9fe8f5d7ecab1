"""Constrained types of the commerce context, declared once (the shared ones are in platform.types)."""

from typing import Annotated

from pydantic import Field, Strict, StringConstraints

from shopfeed.platform.types import JSON_INTEGER

ProductId = Annotated[str, StringConstraints(min_length=2, max_length=64, pattern=r"^[A-Z0-9][A-Z0-9\-_]*$")]
# DynamoDB numbers hold 38 digits; every stored count is bounded far below, sums included.
MAX_STOCK = 10**9
Quantity = Annotated[int, Strict(), Field(ge=1, le=1000), JSON_INTEGER]
StockLevel = Annotated[int, Strict(), Field(ge=0, le=MAX_STOCK), JSON_INTEGER]
# A warehouse id is part of a stock bucket's key (keys.stock_bucket): upper-case, never a `#`.
Warehouse = Annotated[str, StringConstraints(min_length=1, max_length=32, pattern=r"^[A-Z0-9][A-Z0-9\-_]*$")]
# How many buckets a product's stock in one warehouse is split into, and in all its warehouses: 1,024
# plans 10,000 orders/s of one SKU at the capacity model's 20 ms (decision 224). A price change
# reprices the buckets one UpdateItem each (decision 225), so no transaction holds them all.
MAX_BUCKETS = 1024
BucketCount = Annotated[int, Strict(), Field(ge=1, le=MAX_BUCKETS), JSON_INTEGER]
# A review's stars: a strict JSON integer (``true``, ``"5"`` and ``4.5`` are refused), one digit, so
# it sorts as text in the TopReviewsByProduct key.
Rating = Annotated[int, Strict(), Field(ge=1, le=5), JSON_INTEGER]

# A carrier is part of a dashboard key (keys.shipments_partition): a lower-case slug, never a `#`.
Carrier = Annotated[str, StringConstraints(min_length=2, max_length=32, pattern=r"^[a-z0-9][a-z0-9\-]*$")]
TrackingNumber = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9\-]+$")]
