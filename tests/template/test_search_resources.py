"""The search grants in template.yaml: each context's stream consumer writes its index and its API
queries it, and no other role reaches the domain."""

from typing import Any

import pytest

from local import cfn
from shopfeed.commerce.catalog.search import PRODUCTS
from shopfeed.feed.posts.search import POSTS
from shopfeed.platform.search import SearchMapping

RESOURCES = cfn.load()["Resources"]
SEARCH_POLICIES = {name: r for name, r in RESOURCES.items() if r["Type"] == "AWS::IAM::Policy" and "Search" in name}
# (stream consumer, API, the index they share)
CONTEXTS = [
    ("CommerceStreamFunction", "CommerceApiFunction", PRODUCTS),
    ("FeedStreamFunction", "FeedApiFunction", POSTS),
]


def policy_of(function: str) -> dict[str, Any]:
    (policy,) = [p for p in SEARCH_POLICIES.values() if p["Properties"]["Roles"] == [{"Ref": f"{function}Role"}]]
    assert policy["Condition"] == "HasSearch"
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    return dict(statement)


@pytest.mark.parametrize(("consumer", "api", "spec"), CONTEXTS, ids=[spec.alias for *_, spec in CONTEXTS])
def test_a_context_s_consumer_and_api_are_given_the_engine(consumer: str, api: str, spec: SearchMapping) -> None:
    for function in (consumer, api):
        variables = RESOURCES[function]["Properties"]["Environment"]["Variables"]
        assert {"SEARCH_ENDPOINT", "SEARCH_SIGNING_SERVICE"} <= set(variables), function


@pytest.mark.parametrize(("consumer", "api", "spec"), CONTEXTS, ids=[spec.alias for *_, spec in CONTEXTS])
def test_an_api_may_only_read_and_search_its_own_index_of_the_created_domain(
    consumer: str, api: str, spec: SearchMapping
) -> None:
    statement = policy_of(api)
    assert sorted(statement["Action"]) == ["aoss:APIAccessAll", "es:ESHttpGet", "es:ESHttpPost"]
    created_domain = statement["Resource"]["Fn::If"][1]["Fn::Sub"]
    assert created_domain.endswith(f"domain/shopfeed-${{Environment}}/{spec.alias}/_search")


@pytest.mark.parametrize(("consumer", "api", "spec"), CONTEXTS, ids=[spec.alias for *_, spec in CONTEXTS])
def test_a_consumer_may_write_but_never_delete(consumer: str, api: str, spec: SearchMapping) -> None:
    statement = policy_of(consumer)
    assert "es:ESHttpDelete" not in statement["Action"]
    assert "es:ESHttpPut" in statement["Action"]


def test_the_domain_admits_exactly_the_roles_given_search_policies() -> None:
    (statement,) = RESOURCES["SearchDomain"]["Properties"]["AccessPolicies"]["Statement"]
    admitted = {principal["Fn::GetAtt"][0] for principal in statement["Principal"]["AWS"]}
    granted = {p["Properties"]["Roles"][0]["Ref"] for p in SEARCH_POLICIES.values()}
    assert admitted == granted == {f"{function}Role" for context in CONTEXTS for function in context[:2]}
