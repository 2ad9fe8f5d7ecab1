"""Items past their TTL, which DynamoDB deletes days late: the reads leave them out."""

from shopfeed.platform import dynamo


def test_an_item_is_expired_from_the_second_its_ttl_names_and_never_without_one() -> None:
    ttl = {"expires_at": {"N": "1000"}}
    assert not dynamo.expired(ttl, 999)
    assert dynamo.expired(ttl, 1000)
    assert dynamo.expired(ttl, 5000)
    assert not dynamo.expired({"PK": {"S": "ORDER#1"}}, 5000)
    assert not dynamo.expired({"expires_at": {"S": "not a number attribute"}}, 5000)
