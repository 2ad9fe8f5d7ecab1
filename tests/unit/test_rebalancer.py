"""The rebalancer's plan (pure) and its handling of moves that orders beat, on a fake stock."""

import pytest

from shopfeed.commerce.errors import BucketShort
from shopfeed.commerce.inventory.rebalancer import Move, RebalancePolicy, RebalancePorts, plan, rebalance
from shopfeed.commerce.models import DEFAULT_WAREHOUSE, BucketLevel, BucketRef, StockLayout
from shopfeed.platform.errors import Contention
from shopfeed.platform.types import Money

POLICY = RebalancePolicy(low_water=5, max_moves=8)


def levels(*available: int, warehouse: str = DEFAULT_WAREHOUSE) -> list[BucketLevel]:
    return [BucketLevel(warehouse=warehouse, bucket=n, available=a) for n, a in enumerate(available)]


def ref(bucket: int, warehouse: str = DEFAULT_WAREHOUSE) -> BucketRef:
    return BucketRef(warehouse=warehouse, bucket=bucket)


def after(before: list[BucketLevel], moves: list[Move]) -> list[int]:
    units = {level.ref: level.available for level in before}
    for move in moves:
        units[move.source] -= move.units
        units[move.target] += move.units
    return [units[level.ref] for level in before]


def test_low_buckets_are_filled_to_the_even_share_from_the_fullest_first() -> None:
    # given 40 units over 4 buckets, two of them low
    before = levels(0, 2, 18, 20)
    # when
    moves = plan(before, POLICY)
    # then the emptiest bucket is filled first, from the fullest, and every bucket ends at the share
    assert moves == [Move(ref(3), ref(0), 10), Move(ref(2), ref(1), 8)]
    assert after(before, moves) == [10, 10, 10, 10]


def test_a_low_bucket_takes_from_several_donors_and_no_donor_goes_below_the_share() -> None:
    before = levels(0, 13, 13, 14)  # share 10: surpluses 3, 3, 4
    moves = plan(before, POLICY)
    assert sum(m.units for m in moves) == 10
    assert after(before, moves) == [10, 10, 10, 10]


def test_even_buckets_and_buckets_above_the_low_water_mark_move_nothing() -> None:
    assert plan(levels(10, 10, 10, 10), POLICY) == []
    assert plan(levels(6, 30, 30), POLICY) == []  # 6 is not low, however uneven


def test_a_warehouse_too_empty_for_any_bucket_to_reach_the_mark_moves_nothing() -> None:
    # 3 units over 4 buckets: a share of 0, moving them sells nothing more
    assert plan(levels(0, 0, 0, 3), POLICY) == []


def test_units_never_cross_warehouses() -> None:
    before = [*levels(0, 1), *levels(30, 30, warehouse="WH-EAST")]
    assert plan(before, POLICY) == []


def test_warehouses_are_balanced_each_on_its_own() -> None:
    before = [*levels(0, 20), *levels(1, 29, warehouse="WH-EAST")]
    moves = plan(before, POLICY)
    assert after(before, moves) == [10, 10, 15, 15]
    assert all(move.source.warehouse == move.target.warehouse for move in moves)


def test_a_plan_stops_at_the_policy_s_moves() -> None:
    before = levels(0, 0, 0, 0, 40, 40, 40, 40)
    assert len(plan(before, RebalancePolicy(low_water=5, max_moves=3))) == 3


def test_units_are_conserved_by_every_plan() -> None:
    for before in (levels(0, 2, 18, 20), levels(0, 0, 1, 99), levels(4, 4, 4, 100, 3), levels(0, 7)):
        assert sum(after(before, plan(before, POLICY))) == sum(level.available for level in before)


class FakeStock:
    """Levels in memory; ``refuse`` makes the move of a source raise what DynamoDB's cancellation would."""

    def __init__(self, available: list[int], refuse: dict[int, Exception] | None = None) -> None:
        self.units = {ref(n): a for n, a in enumerate(available)}
        self.refuse = refuse or {}
        self.layout = StockLayout(
            product_id="P-RED-TSHIRT",
            warehouses={DEFAULT_WAREHOUSE: len(available)},
            price=Money(amount=1999, currency="EUR"),
            version=1,
        )

    def find_layout(self, product_id: str, consistent: bool = True) -> StockLayout | None:
        return self.layout if product_id == self.layout.product_id else None

    def levels_of(self, layout: StockLayout) -> list[BucketLevel]:
        return [BucketLevel(warehouse=r.warehouse, bucket=r.bucket, available=a) for r, a in self.units.items()]

    def move(self, product_id: str, source: BucketRef, target: BucketRef, units: int) -> None:
        if source.bucket in self.refuse:
            raise self.refuse[source.bucket]
        self.units[source] -= units
        self.units[target] += units


@pytest.mark.parametrize(
    "refusal",
    [BucketShort("P-RED-TSHIRT", DEFAULT_WAREHOUSE, 3, 10, 4), Contention("stock of product P-RED-TSHIRT")],
    ids=["source drained by orders", "buckets held by orders"],
)
def test_a_move_that_orders_beat_is_skipped_and_the_others_are_made(refusal: Exception) -> None:
    # given the fullest bucket's move will be refused
    stock = FakeStock([0, 2, 18, 20], refuse={3: refusal})
    # when
    report = rebalance(RebalancePorts(stock, POLICY), "P-RED-TSHIRT")
    # then the refused move changed nothing, the other one was made
    assert (report.moves, report.units, report.skipped) == (1, 8, 1)
    assert list(stock.units.values()) == [0, 10, 10, 20]


def test_a_product_deleted_since_its_record_is_left_alone() -> None:
    report = rebalance(RebalancePorts(FakeStock([0, 20]), POLICY), "P-GONE")
    assert (report.moves, report.skipped) == (0, 0)
