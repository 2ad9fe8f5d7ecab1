"""The user pool's post-confirmation trigger, as template.yaml declares it."""

from typing import Any

from local import cfn
from shopfeed.accounts.settings import AccountsSettings

TEMPLATE = cfn.load()
RESOURCES = TEMPLATE["Resources"]
SIGN_UP = ("UserSignUpFunction", "UserSignUpFunctionLogs", "UserSignUpPermission")


def props(name: str) -> dict[str, Any]:
    return dict(RESOURCES[name]["Properties"])


def test_the_pool_calls_the_function_live_alias_after_a_confirmation() -> None:
    assert props("UserPool")["LambdaConfig"] == {"PostConfirmation": {"Ref": "UserSignUpFunction.Alias"}}


def test_only_the_stacks_own_pool_may_invoke_the_trigger() -> None:
    permission = props("UserSignUpPermission")
    assert permission["FunctionName"] == {"Ref": "UserSignUpFunction.Alias"}
    assert permission["Principal"] == "cognito-idp.amazonaws.com"
    assert permission["SourceArn"] == {"Fn::GetAtt": ["UserPool", "Arn"]}
    assert permission["SourceAccount"] == {"Ref": "AWS::AccountId"}


def test_the_function_refers_to_neither_the_pool_nor_its_permission_so_there_is_no_cycle() -> None:
    # the pool names the function and the permission names both; the function must name neither
    referred = cfn.references(cfn.function_properties("UserSignUpFunction", TEMPLATE))
    assert not referred & {"UserPool", "UserSignUpPermission", "UserPoolClient"}


def test_the_trigger_exists_only_with_the_stacks_user_pool() -> None:
    for name in (*SIGN_UP, "UserSignUpFunctionErrorsAlarm", "UserSignUpFunctionThrottlesAlarm"):
        assert RESOURCES[name]["Condition"] == RESOURCES["UserPool"]["Condition"] == "UseCognito", name


def test_the_function_may_only_put_items_in_the_two_tables_and_is_given_their_names() -> None:
    properties = cfn.function_properties("UserSignUpFunction", TEMPLATE)
    (statement,) = properties["Policies"][0]["Statement"]
    assert statement["Action"] == "dynamodb:PutItem"  # registration: one transaction of conditional puts
    assert statement["Resource"] == [{"Fn::GetAtt": ["CommerceTable", "Arn"]}, {"Fn::GetAtt": ["FeedTable", "Arn"]}]
    variables = properties["Environment"]["Variables"]
    assert {name.lower() for name in variables} >= set(AccountsSettings.model_fields) - {"call_budget"}
    assert variables["COMMERCE_TABLE_NAME"] == {"Ref": "CommerceTable"}
    assert variables["FEED_TABLE_NAME"] == {"Ref": "FeedTable"}
