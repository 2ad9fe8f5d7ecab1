"""ETag / If-Match optimistic locking (RFC 9110 §8.8.3, §13.1.1)."""

import pytest

from shopfeed.platform.errors import PreconditionRequired
from shopfeed.platform.versioning import etag, expected_version

NEVER_MATCHES = 0  # versions start at 1, so a stale-version write is refused with 412


def test_an_etag_is_the_version_as_a_strong_quoted_tag() -> None:
    assert etag(3) == '"3"'


@pytest.mark.parametrize("version", [1, 2, 41, 10**17])
def test_if_match_with_the_etag_read_expects_that_version(version: int) -> None:
    assert expected_version(etag(version)) == version


def test_if_match_tolerates_surrounding_whitespace() -> None:
    assert expected_version('  "7" ') == 7


@pytest.mark.parametrize(
    "header",
    [
        # If-Match compares strongly: a weak tag never matches (RFC 9110 §13.1.1).
        pytest.param('W/"3"', id="weak-tag"),
        pytest.param("*", id="any"),
        pytest.param("3", id="unquoted"),
        pytest.param('"abc"', id="not-a-version"),
        pytest.param("garbage", id="garbage"),
    ],
)
def test_an_if_match_that_names_no_version_never_matches(header: str) -> None:
    assert expected_version(header) == NEVER_MATCHES


@pytest.mark.parametrize("header", [None, "", "   "], ids=["missing", "empty", "blank"])
def test_a_write_without_if_match_requires_a_precondition(header: str | None) -> None:
    with pytest.raises(PreconditionRequired):
        expected_version(header)
