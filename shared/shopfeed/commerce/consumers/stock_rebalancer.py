"""The stock rebalancer's record handler (functions/stock_rebalancer): buckets left below the low-water
mark even out their products' buckets."""

from collections.abc import Sequence

from shopfeed.commerce import bootstrap
from shopfeed.commerce.inventory import rebalancer
from shopfeed.platform import streams


def rebalance_stock(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """Stock buckets left below the low-water mark: their products' buckets evened out."""
    return rebalancer.rebalance_low_buckets(bootstrap.rebalancer(), changes)
