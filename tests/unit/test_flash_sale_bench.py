"""The flash-sale benchmark's reading of the conflict proxy's log: which orders left a conflicted bucket."""

from bench.flash_sale import moves_after_conflicts
from local.item_locks import Attempt
from shopfeed.commerce import keys

TABLE = "CommerceTable"
PRODUCT = "P-SALE"


def order(order_id: str) -> tuple[str, str, str]:
    key = keys.order(order_id)
    return TABLE, key["PK"], key["SK"]


def bucket(n: int, product_id: str = PRODUCT) -> tuple[str, str, str]:
    key = keys.stock_bucket(product_id, "MAIN", n)
    return TABLE, key["PK"], key["SK"]


def attempt(order_id: str, n: int, conflicted: bool = False, applied: bool = True) -> Attempt:
    items = (order(order_id), bucket(n))
    return Attempt(items, bucket(n) if conflicted else None, applied=not conflicted and applied)


def test_an_order_placed_on_another_bucket_than_the_one_it_conflicted_on_moved() -> None:
    attempts = [attempt("O1", 3, conflicted=True), attempt("O1", 5), attempt("O2", 4)]
    assert moves_after_conflicts(attempts, PRODUCT) == (1, 1)


def test_an_order_retried_on_the_bucket_it_conflicted_on_did_not_move() -> None:
    attempts = [attempt("O1", 0, conflicted=True), attempt("O1", 0, conflicted=True), attempt("O1", 0)]
    assert moves_after_conflicts(attempts, PRODUCT) == (2, 0)


def test_an_order_refused_on_another_bucket_did_not_move_and_other_products_count_for_nothing() -> None:
    other = Attempt((order("O3"), bucket(1, "P-OTHER")), bucket(1, "P-OTHER"))
    attempts = [attempt("O1", 2, conflicted=True), attempt("O1", 4, applied=False), other]
    assert moves_after_conflicts(attempts, PRODUCT) == (1, 0)
