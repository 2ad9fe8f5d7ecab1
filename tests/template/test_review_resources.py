"""Reviews as template.yaml declares them: the three indexes, the stream filter and batch size the
rating counters rely on, and the permissions of the functions that write them."""

from typing import Any

import pytest

from local import cfn
from local.filtering import filter_patterns, passes
from shopfeed.commerce import items
from shopfeed.platform import exactly_once

RESOURCES = cfn.load()["Resources"]
FUNCTIONS = cfn.resources("AWS::Serverless::Function")
# Lambda takes 5 filters per event source mapping unless the account's quota was raised (to 10 at most).
DEFAULT_FILTER_QUOTA = 5


def commerce_indexes() -> dict[str, dict[str, Any]]:
    return {i["IndexName"]: i for i in RESOURCES["CommerceTable"]["Properties"]["GlobalSecondaryIndexes"]}


def stream_mapping(function: str) -> dict[str, Any]:
    (event,) = FUNCTIONS[function]["Properties"]["Events"].values()
    return dict(event["Properties"])


def statements(function: str) -> list[dict[str, Any]]:
    return list(FUNCTIONS[function]["Properties"]["Policies"][0]["Statement"])


def actions_on_the_table(function: str) -> set[str]:
    table = {"Fn::GetAtt": ["CommerceTable", "Arn"]}
    found: set[str] = set()
    for statement in statements(function):
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        if table in resources:
            found.update([statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"])
    return found


def record(event_name: str, entity_type: str) -> dict[str, Any]:
    image = "OldImage" if event_name == "REMOVE" else "NewImage"
    return {"eventName": event_name, "dynamodb": {image: {"entity_type": {"S": entity_type}}}}


@pytest.mark.parametrize("event_name", ["INSERT", "MODIFY", "REMOVE"])
def test_the_commerce_stream_lets_in_every_review_change(event_name: str) -> None:
    patterns = filter_patterns(stream_mapping("CommerceStreamFunction")["FilterCriteria"])
    assert passes(patterns, record(event_name, items.REVIEW))


@pytest.mark.parametrize("entity_type", [exactly_once.APPLIED_ENTITY_TYPE, items.PURCHASE, items.CUSTOMER])
def test_the_commerce_stream_keeps_out_applied_sets_purchases_and_customers(entity_type: str) -> None:
    patterns = filter_patterns(stream_mapping("CommerceStreamFunction")["FilterCriteria"])
    assert not any(passes(patterns, record(name, entity_type)) for name in ("INSERT", "MODIFY", "REMOVE"))


def test_the_feed_stream_keeps_out_its_counters_applied_sets_written_or_expired() -> None:
    # A set's write or TTL expiry let in would count nothing but cost an invocation per counter write.
    patterns = filter_patterns(stream_mapping("FeedStreamFunction")["FilterCriteria"])
    assert not any(
        passes(patterns, record(name, exactly_once.APPLIED_ENTITY_TYPE)) for name in ("INSERT", "MODIFY", "REMOVE")
    )


@pytest.mark.parametrize(
    "function",
    sorted(
        n
        for n, f in FUNCTIONS.items()
        for e in (f["Properties"].get("Events") or {}).values()
        if e["Type"] == "DynamoDB"
    ),
)
def test_a_stream_mapping_stays_within_lambdas_default_filter_quota(function: str) -> None:
    assert len(stream_mapping(function)["FilterCriteria"]["Filters"]) <= DEFAULT_FILTER_QUOTA


def test_the_stream_consumer_may_read_and_write_the_counters_and_their_applied_sets_and_nothing_more() -> None:
    assert actions_on_the_table("CommerceStreamFunction") == {"dynamodb:UpdateItem", "dynamodb:BatchGetItem"}


def test_the_api_may_check_a_purchase_in_a_transaction_and_delete_a_review() -> None:
    assert {"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem"} <= actions_on_the_table("CommerceApiFunction")
    assert "dynamodb:Scan" not in actions_on_the_table("CommerceApiFunction")
