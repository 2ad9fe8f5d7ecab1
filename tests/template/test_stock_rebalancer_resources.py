"""The stock rebalancer as template.yaml declares it: woken only by buckets below its low-water mark,
the mark the same number in the filter and in the function's settings, and permissions for its reads
and moves only."""

from typing import Any

from local import cfn
from local.filtering import filter_patterns, passes
from shopfeed.commerce import items, keys
from shopfeed.commerce.settings import StockRebalancerSettings
from shopfeed.platform import dynamo

FUNCTION = "StockRebalancerFunction"
PROPERTIES = cfn.resources("AWS::Serverless::Function")[FUNCTION]["Properties"]


def mapping() -> dict[str, Any]:
    (event,) = PROPERTIES["Events"].values()
    return dict(event["Properties"])


def record(kind: str, entity_type: str, available: int) -> dict[str, Any]:
    image = dynamo.serialize(
        {**keys.stock_bucket("P-RED-TSHIRT", "MAIN", 0), "entity_type": entity_type, "available": available}
    )
    return {"eventName": kind, "dynamodb": {"NewImage": image}}


def low_water() -> int:
    return int(PROPERTIES["Environment"]["Variables"]["REBALANCE_LOW_WATER"])


def test_only_bucket_records_below_the_functions_low_water_mark_invoke_it() -> None:
    # given the mapping's filter and the mark the function is configured with
    patterns = filter_patterns(mapping()["FilterCriteria"])
    mark = low_water()

    # then a bucket left just below the mark passes; at the mark, another type or a new bucket does not
    assert all(passes(patterns, record("MODIFY", items.STOCK_BUCKET, level)) for level in range(mark))
    assert not passes(patterns, record("MODIFY", items.STOCK_BUCKET, mark))
    assert not passes(patterns, record("MODIFY", items.STOCK_LAYOUT, 0))
    assert not passes(patterns, record("INSERT", items.STOCK_BUCKET, 0))


def test_the_mark_and_the_moves_are_settings_the_function_validates() -> None:
    variables = PROPERTIES["Environment"]["Variables"]
    config = StockRebalancerSettings.model_validate(
        {
            "commerce_table_name": "CommerceTable",
            **{k.lower(): v for k, v in variables.items() if k.startswith("REBALANCE_")},
        }
    )
    assert config.rebalance_low_water == low_water()
    assert config.rebalance_max_moves >= 1


def test_the_rebalancer_reads_buckets_and_moves_them_and_nothing_else() -> None:
    table = {"Fn::GetAtt": ["CommerceTable", "Arn"]}
    actions = {
        action
        for statement in PROPERTIES["Policies"][0]["Statement"]
        if statement["Resource"] == table
        for action in ([statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"])
    }
    assert actions == {"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:UpdateItem"}
