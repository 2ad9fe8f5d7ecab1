"""Every function's AWS calls give up in time for the function to answer: the retry budget it names in
template.yaml (CALL_BUDGET) against its Timeout."""

import pytest

from local import cfn
from shopfeed.platform.clients import BUDGETS, ClientSettings

# What a function needs after its last call gave up: answer a 503, or report its failed records.
ROOM_TO_ANSWER_S = 2.0
FUNCTIONS = sorted(cfn.resources("AWS::Serverless::Function"))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_one_call_at_its_worst_leaves_the_function_time_to_answer(function: str) -> None:
    # given the function's Timeout and the budget its environment names
    properties = cfn.function_properties(function)
    budget_name = properties["Environment"]["Variables"].get("CALL_BUDGET")
    budget = BUDGETS[ClientSettings.model_validate({"call_budget": budget_name}).call_budget]

    # when its SDK retries every attempt of one call to the end
    worst = budget.worst_case_s()

    # then the function still has time to answer
    timeout = properties["Timeout"]
    assert worst + ROOM_TO_ANSWER_S <= timeout, f"{function}: one call may take {worst:.1f} s of its {timeout} s"


def test_the_api_functions_fail_fast_and_never_adapt_their_rate_per_container() -> None:
    for function in cfn.api_functions():
        variables = cfn.function_properties(function)["Environment"]["Variables"]
        assert variables["CALL_BUDGET"] == "request", function
    assert BUDGETS["request"].mode == "standard"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_no_function_in_aws_stretches_its_timeouts(function: str) -> None:
    # CALL_TIMEOUT_SCALE is for the local engines only (local/engines.py)
    assert "CALL_TIMEOUT_SCALE" not in cfn.function_properties(function)["Environment"]["Variables"]


def test_a_timeout_scale_stretches_the_waits_and_keeps_the_attempts() -> None:
    budget = BUDGETS["request"]
    stretched = budget.config(4.0)
    assert (stretched.connect_timeout, stretched.read_timeout) == (
        budget.connect_timeout_s * 4,
        budget.read_timeout_s * 4,
    )
    assert stretched.retries == budget.config().retries
