"""Every key that holds a user id stays within DynamoDB's key sizes for every subject the API accepts.

DynamoDB takes at most 2,048 bytes in a partition key and 1,024 in a sort key, on the table and on
every index. A subject is up to 255 bytes of UTF-8 (platform.identity); escaped it may triple.
"""

from collections.abc import Callable, Mapping
from datetime import UTC, datetime

import pytest

from shopfeed.commerce import keys as commerce
from shopfeed.feed import keys as feed
from shopfeed.platform import counters, dynamo, idempotency
from shopfeed.platform.idempotency import IdempotentRequest, Snapshot
from shopfeed.platform.identity import MAX_SUBJECT_BYTES, subject_problem
from shopfeed.platform.models import Model

LONGEST_SUBJECTS = [
    pytest.param("#" * MAX_SUBJECT_BYTES, id="255 hashes, escaped to 765 bytes"),
    pytest.param("\U0001f986" * 63 + "a#%", id="255 bytes of four-byte characters"),
    pytest.param("S" * MAX_SUBJECT_BYTES, id="255 ASCII letters"),
]
NOW = datetime(2026, 11, 25, 10, tzinfo=UTC)
AT = "2026-11-25T10:00:00.000Z"
ULID = "01M8A15NZ6942M3VB6QCVS3Z0R"
SECOND = 99_999_999_999  # a record's creation second (epoch seconds, as far ahead as keys allow)

PARTITION_KEY_BYTES = 2048
SORT_KEY_BYTES = 1024


class _Value(Model):
    value: str


def _idempotency_key(user_id: str) -> Mapping[str, str]:
    request = IdempotentRequest.of(user_id, "\U0001f511" * 255, "operation", {})
    put = idempotency.record_put("Table", request, Snapshot(_Value, version=1), _Value(value="v"), NOW)
    return {name: put["Put"]["Item"][name]["S"] for name in ("PK", "SK")}  # type: ignore[typeddict-item]


KEY_BUILDERS: dict[str, Callable[[str], Mapping[str, str]]] = {
    "commerce customer": commerce.user,
    "commerce proof of purchase": lambda u: commerce.purchase(u, "P-" + "X" * 60),
    "commerce order by user": lambda u: commerce.order_by_user(u, AT, ULID),
    "commerce review": lambda u: commerce.review("P-" + "X" * 60, u),
    "commerce review orders": lambda u: commerce.review_orders("P-" + "X" * 60, u, 5, AT),
    "commerce applied set": lambda u: commerce.applied_records(counters.target_id(commerce.user(u)), SECOND),
    "feed profile": feed.profile,
    "feed follow edge": lambda u: feed.follow(u, u),
    "feed follower index": lambda u: feed.follower_of(u, u, AT),
    "feed following index": lambda u: feed.followed_by(u, u, AT),
    "feed entry": lambda u: feed.feed_entry(u, AT, ULID),
    "feed pulled author": feed.pull_author,
    "feed posts by author": lambda u: feed.post_by_author(u, AT, ULID),
    "feed like": lambda u: feed.like(ULID, u),
    "feed like by time": lambda u: feed.like_by_time(ULID, u, AT),
    "feed notification": lambda u: feed.notification(u, ULID),
    "feed unread notification": lambda u: feed.unread(u, ULID),
    "feed leaderboard entry": lambda u: feed.leaderboard_entry("2026-11", u),
    "feed applied set": lambda u: feed.applied_records(counters.target_id(feed.profile(u)), SECOND),
    "idempotency record": _idempotency_key,
}


def _is_partition(attribute: str) -> bool:
    return attribute == dynamo.PARTITION or attribute.endswith("_pk")


@pytest.mark.parametrize("subject", LONGEST_SUBJECTS)
@pytest.mark.parametrize("builder", KEY_BUILDERS, ids=str)
def test_every_key_of_the_longest_accepted_subjects_fits_dynamodbs_key_sizes(builder: str, subject: str) -> None:
    # given
    assert subject_problem(subject) is None

    # when
    key = KEY_BUILDERS[builder](subject)

    # then
    for attribute, value in key.items():
        limit = PARTITION_KEY_BYTES if _is_partition(attribute) else SORT_KEY_BYTES
        assert len(value.encode()) <= limit, f"{attribute} is {len(value.encode())} bytes"


def test_a_subject_of_more_than_255_bytes_is_refused_however_few_its_characters() -> None:
    assert subject_problem("\U0001f986" * 64) is not None  # 64 characters, 256 bytes
    assert subject_problem("\U0001f986" * 63) is None
