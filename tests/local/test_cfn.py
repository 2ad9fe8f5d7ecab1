"""The template reader: what it cannot resolve is an error that says why, never a made-up value."""

import copy
from typing import Any

import pytest

from local import cfn
from local.cfn import Resolver, UnresolvedReference

TEMPLATE: dict[str, Any] = {
    "Parameters": {
        "Environment": {"Type": "String", "Default": "dev"},
        "AlarmTopicArn": {"Type": "String", "Default": ""},
        "NoDefault": {"Type": "String"},
        "Zones": {"Type": "CommaDelimitedList", "Default": "a,b"},
    },
    "Conditions": {
        "IsProd": {"Fn::Equals": [{"Ref": "Environment"}, "prod"]},
        "HasTopic": {"Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmTopicArn"}, ""]}]},
        "ProdWithTopic": {"Fn::And": [{"Condition": "IsProd"}, {"Condition": "HasTopic"}]},
    },
    "Rules": {"TopicInProd": {"Assertions": [{"Assert": {"Fn::Not": [{"Condition": "IsProd"}]}}]}},
    "Mappings": {"Retention": {"dev": {"Days": 7}, "prod": {"Days": 90}}},
    "Resources": {
        "Table": {"Type": "AWS::DynamoDB::Table"},
        "Topic": {"Type": "AWS::SNS::Topic"},
        "ProdKey": {"Type": "AWS::KMS::Key", "Condition": "IsProd"},
    },
}


@pytest.fixture
def resolver() -> Resolver:
    resolver = Resolver(copy.deepcopy(TEMPLATE))
    resolver.refs["Table"] = "Table"
    resolver.attributes[("Table", "Arn")] = "arn:aws:dynamodb:us-east-1:123456789012:table/Table"
    return resolver


@pytest.mark.parametrize(
    ("node", "reason"),
    [
        ({"Ref": "Topic"}, "does not emulate AWS::SNS::Topic"),
        ({"Fn::GetAtt": ["Topic", "TopicName"]}, "does not emulate AWS::SNS::Topic"),
        ({"Fn::Sub": "${Topic}-alarms"}, "does not emulate AWS::SNS::Topic"),
        ({"Ref": "ProdKey"}, "Condition IsProd is false"),
        ({"Ref": "Typo"}, "no parameter, pseudo parameter or resource has this name"),
        ({"Ref": "NoDefault"}, "the parameter has no value"),
        ({"Fn::GetAtt": ["Table", "StreamArn"]}, "does not know this attribute of Table"),
        ({"Fn::Sub": "${Table.Nope}"}, "does not know this attribute of Table"),
        ({"Fn::If": ["Missing", "a", "b"]}, "Condition Missing is not defined"),
        ({"Fn::ImportValue": "shared-vpc"}, "Fn::ImportValue is not supported"),
    ],
)
def test_a_reference_to_what_does_not_exist_locally_is_an_error_saying_why(
    resolver: Resolver, node: dict[str, Any], reason: str
) -> None:
    with pytest.raises(UnresolvedReference, match=reason):
        resolver.resolve({"Variables": {"VALUE": node}})


def test_known_references_conditions_and_no_value_resolve_as_cloudformation_does(resolver: Resolver) -> None:
    # given properties written the way a hardened template writes them
    properties = {
        "TableArn": {"Fn::GetAtt": "Table.Arn"},
        "Name": {"Fn::Sub": ["${AWS::StackName}-${Table}-${Suffix}-${!Literal}", {"Suffix": "x"}]},
        # the branch not taken refers to a resource that does not exist: it is never resolved
        "Key": {"Fn::If": ["IsProd", {"Ref": "ProdKey"}, {"Ref": "AWS::NoValue"}]},
        "Actions": [{"Fn::If": ["ProdWithTopic", {"Ref": "AlarmTopicArn"}, {"Ref": "AWS::NoValue"}]}],
        "Days": {"Fn::FindInMap": ["Retention", {"Ref": "Environment"}, "Days"]},
        "Zone": {"Fn::Select": [1, {"Ref": "Zones"}]},
    }

    # when they are resolved
    resolved = resolver.resolve(properties)

    # then each has its CloudFormation value, and AWS::NoValue removed what it stood for
    assert resolved == {
        "TableArn": "arn:aws:dynamodb:us-east-1:123456789012:table/Table",
        "Name": "shopfeed-local-Table-x-${Literal}",
        "Actions": [],
        "Days": 7,
        "Zone": "b",
    }


def test_only_the_properties_the_stack_uses_are_resolved(resolver: Resolver) -> None:
    # given a table whose encryption key exists only in the deployed stack
    properties = {"TableName": {"Ref": "Table"}, "SSESpecification": {"KMSMasterKeyId": {"Ref": "Topic"}}}

    # then asking for the table's local properties leaves that one alone
    assert resolver.resolve_keys(properties, cfn.TABLE_PROPERTIES) == {"TableName": "Table"}


def test_a_static_reading_lets_template_resources_stand_for_themselves_but_not_typos() -> None:
    # given a resolver for reading the template without a stack
    resolver = Resolver(copy.deepcopy(TEMPLATE), stand_ins=True)

    # then a resource of the template stands for itself, and a name it does not have is still an error
    assert resolver.resolve([{"Ref": "Topic"}, {"Fn::GetAtt": ["Topic", "TopicName"]}]) == ["Topic", "Topic.TopicName"]
    with pytest.raises(UnresolvedReference):
        resolver.resolve({"Ref": "Typo"})
