"""CommerceTable's warm throughput as template.yaml declares it (decision 230): set only for a sale, by a
parameter that sets none by default, and never handed to the local engines."""

from local import cfn

TABLE = cfn.resources("AWS::DynamoDB::Table")["CommerceTable"]["Properties"]
TEMPLATE = cfn.load(cfn.TEMPLATE)


def test_the_table_is_pre_warmed_only_when_the_parameter_asks() -> None:
    parameter = TEMPLATE["Parameters"]["CommerceWarmWriteUnits"]
    assert (parameter["Type"], parameter["Default"], parameter["MinValue"]) == ("Number", 0, 0)
    assert TEMPLATE["Conditions"]["CommerceWarmed"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "CommerceWarmWriteUnits"}, 0]}]
    }
    condition, warmed, cold = TABLE["WarmThroughput"]["Fn::If"]
    assert condition == "CommerceWarmed"
    assert warmed == {"WriteUnitsPerSecond": {"Ref": "CommerceWarmWriteUnits"}}
    assert cold == {"Ref": "AWS::NoValue"}


def test_the_local_engines_create_the_table_without_it() -> None:
    assert "WarmThroughput" not in cfn.table_definitions()["CommerceTable"]
