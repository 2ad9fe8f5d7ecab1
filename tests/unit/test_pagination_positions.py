"""Unsigned page positions: for a worker's own queue messages, bound to their query like a cursor."""

import pytest

from shopfeed.platform.errors import InvalidCursor
from shopfeed.platform.pagination import UNSIGNED


def test_a_position_comes_back_from_its_own_scope() -> None:
    position = {"PK": "USER#U100", "SK": "FOLLOWER#U400"}
    assert UNSIGNED.decode("fanout:U100", UNSIGNED.encode("fanout:U100", position)) == position


def test_no_position_is_the_first_page() -> None:
    assert UNSIGNED.decode("fanout:U100", None) is None


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"s": "fanout:U999", "p": {}}'])
def test_a_position_of_another_scope_or_no_position_is_refused(text: str) -> None:
    with pytest.raises(InvalidCursor):
        UNSIGNED.decode("fanout:U100", text)
