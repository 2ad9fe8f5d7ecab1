"""The payment window: an order not paid within ``PaymentWindowMinutes`` of its placement is Expired and
its stock restored, exactly once, by a sweep every minute (decision 97).

A run reads the sparse ``UnpaidOrders`` index (one Query per write shard, merged oldest first) for
orders placed before ``now - window``, reads each order strongly and expires them, up to
``GROUP_ITEMS`` transaction items at a time, in guarded TransactWriteItems (each order still Placed at
the version read with no payment in flight; its restock, ``OrderExpired``, history). The guard is the
whole of "exactly once": a rival sweep, a cancel or a payment that wins the race leaves the loser's
condition failed, and nothing of that order is written. An order with a payment in
flight is left for a later sweep: approved, it is Paid and leaves the index; declined, the next sweep
expires it.
"""

import heapq
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from itertools import batched, islice
from typing import Final, Protocol

from shopfeed.commerce import events, keys
from shopfeed.commerce.models import EXPIRY_ACTOR, Order, OrderMove, OrderStatus
from shopfeed.commerce.orders.repository import Expiring, Expiry
from shopfeed.platform.clock import iso, utc_now
from shopfeed.platform.errors import Contention
from shopfeed.platform.observability import logger, metrics

# Orders read between two checks of the time left (and handed to the workers together).
CHUNK: Final = 100
# Transaction items of one expiry transaction (DynamoDB takes 100): ~10 one-line orders. Larger groups
# save round trips, but an order paid meanwhile sends its whole group again, and two overlapping sweeps
# meet on more items.
GROUP_ITEMS: Final = 40


class ExpiryStore(Protocol):
    """What a sweep needs of CommerceTable (``orders.repository.ExpiryRepository``)."""

    def placed_before(self, cutoff: str, shard: int) -> Iterator[tuple[str, str]]: ...
    def get_order(self, order_id: str) -> Order | None: ...
    def expire(self, expiring: Sequence[Expiring]) -> dict[str, Expiry]: ...


@dataclass(frozen=True)
class ExpiryPolicy:
    """``window`` after placement an unpaid order expires; a run expires at most ``max_orders``, begins
    no chunk with less than ``stop_margin`` of its time left, and expires ``workers`` orders at once."""

    window: timedelta
    max_orders: int
    stop_margin: timedelta
    workers: int


@dataclass(frozen=True)
class ExpiryPorts:
    store: ExpiryStore
    policy: ExpiryPolicy


class Outcome(StrEnum):
    DONE = "done"  # no overdue order left that could be expired
    LIMIT = "limit"  # max_orders reached: there may be more
    TIME = "time"  # stopped before the function's timeout: there may be more


@dataclass
class ExpiryReport:
    outcome: Outcome = Outcome.DONE
    expired: int = 0  # orders this run expired (stock restored, OrderExpired written)
    paying: int = 0  # overdue orders with a payment in flight: left for a later sweep
    moved: int = 0  # listed, but paid, cancelled or expired meanwhile (the index is eventual)
    busy: int = 0  # contended by concurrent writes after every retry: left for the next sweep
    # How long past its deadline the oldest overdue order this run left unexpired is (paying, or not
    # reached): 0 when none. A value that keeps growing is a stuck expiry (the overdue alarm).
    oldest_overdue_seconds: int = 0

    @property
    def counts(self) -> dict[str, int | str]:
        return {
            "outcome": self.outcome.value,
            "expired": self.expired,
            "paying": self.paying,
            "moved": self.moved,
            "busy": self.busy,
            "oldest_overdue_seconds": self.oldest_overdue_seconds,
        }


def run(ports: ExpiryPorts, time_left_ms: Callable[[], int], clock: Callable[[], datetime] = utc_now) -> ExpiryReport:
    """One sweep; ``time_left_ms`` is the invocation's remaining time (Lambda's context)."""
    policy = ports.policy
    now = clock()
    deadline_before = now - policy.window
    report = ExpiryReport()
    shards = [ports.store.placed_before(iso(deadline_before), shard) for shard in range(keys.UNPAID_ORDER_SHARDS)]
    overdue = heapq.merge(*shards)
    left: list[str] = []  # placement times of overdue orders left unexpired

    minutes = int(policy.window.total_seconds() // 60)

    def read(candidate: tuple[str, str]) -> Order | None:
        return ports.store.get_order(candidate[1])

    def expire(group: list[Expiring]) -> dict[str, Expiry]:
        try:
            return ports.store.expire(group)
        except Contention:
            return dict.fromkeys((e.order.order_id for e in group), Expiry.BUSY)

    # Threads, not one call after another: each order is read with a round trip and each group written
    # with one, all waiting on the network, and a backlog after an outage should clear in one run.
    with ThreadPoolExecutor(max_workers=policy.workers) as pool:
        for chunk in batched(islice(overdue, policy.max_orders), CHUNK, strict=False):
            if time_left_ms() < policy.stop_margin.total_seconds() * 1000:
                report.outcome = Outcome.TIME
                left.append(chunk[0][0])
                break
            placed = {order_id: placed_at for placed_at, order_id in chunk}
            due: list[Expiring] = []
            for order in pool.map(read, chunk):
                if order is None or order.status is not OrderStatus.PLACED:
                    report.moved += 1
                else:
                    due.append(expiring(order, minutes, clock))
            for outcomes in pool.map(expire, _groups(due)):
                for order_id, outcome in outcomes.items():
                    if outcome is Expiry.EXPIRED:
                        report.expired += 1
                        logger.info("order expired", order_id=order_id, placed_at=placed[order_id])
                    elif outcome is Expiry.PAYING:
                        report.paying += 1
                        left.append(placed[order_id])
                    elif outcome is Expiry.BUSY:
                        report.busy += 1
                        left.append(placed[order_id])
                    else:
                        report.moved += 1
        else:
            unreached = next(overdue, None)
            if unreached is not None:
                report.outcome = Outcome.LIMIT
                left.append(unreached[0])
    if left:
        report.oldest_overdue_seconds = int((deadline_before - datetime.fromisoformat(min(left))).total_seconds())
    return report


def expiring(order: Order, minutes: int, clock: Callable[[], datetime]) -> Expiring:
    """The sweep's expiry of ``order``, as read: its next state, its ``OrderExpired`` event and its move."""
    expired = order.model_copy(
        update={"status": OrderStatus.EXPIRED, "updated_at": iso(clock()), "version": order.version + 1}
    )
    window = f"{minutes} minute" if minutes == 1 else f"{minutes} minutes"
    move = OrderMove.of(OrderStatus.PLACED, expired, EXPIRY_ACTOR, f"not paid within {window}")
    return Expiring(order, expired, events.order_expired(expired, minutes), move)


def _groups(expiring: Sequence[Expiring]) -> Iterator[list[Expiring]]:
    """The orders in transactions of at most ``GROUP_ITEMS`` items (an order of many lines alone)."""
    group: list[Expiring] = []
    size = 0
    for e in expiring:
        if group and size + e.items > GROUP_ITEMS:
            yield group
            group, size = [], 0
        group.append(e)
        size += e.items
    if group:
        yield group


def record_run(report: ExpiryReport) -> dict[str, int | str]:
    """Log and count a sweep's outcome (the function's answer)."""
    metrics.add_metric(name="OrdersExpired", unit="Count", value=report.expired)
    metrics.add_metric(name="OverdueOrderAge", unit="Seconds", value=report.oldest_overdue_seconds)
    logger.info("payment window sweep", extra=report.counts)
    return report.counts
