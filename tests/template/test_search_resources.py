"""The search resources in template.yaml: each context's API queries its own index, the stream consumers
queue their index writes on SearchSyncQueue and never reach the engine, the search sync worker alone
writes both indexes, and its queue outlasts a day of engine outage before anything reaches its DLQ."""

from typing import Any

import pytest

from local import cfn
from shopfeed.commerce.catalog.search import PRODUCTS
from shopfeed.feed.posts.search import POSTS
from shopfeed.indexing.bootstrap import INDEXES, SearchSyncWorkerSettings
from shopfeed.platform.search import SearchMapping
from shopfeed.platform.search.sync import BACKOFF

TEMPLATE = cfn.load()
RESOURCES = TEMPLATE["Resources"]
SEARCH_POLICIES = {name: r for name, r in RESOURCES.items() if r["Type"] == "AWS::IAM::Policy" and "Search" in name}
WORKER = "SearchSyncWorkerFunction"
# (stream consumer, API, the index they share)
CONTEXTS = [
    ("CommerceStreamFunction", "CommerceApiFunction", PRODUCTS),
    ("FeedStreamFunction", "FeedApiFunction", POSTS),
]
IDS = [spec.alias for *_, spec in CONTEXTS]
DAY_S = 24 * 3600


def props(name: str) -> dict[str, Any]:
    return dict(RESOURCES[name]["Properties"])


def policy_of(function: str) -> dict[str, Any]:
    (policy,) = [p for p in SEARCH_POLICIES.values() if p["Properties"]["Roles"] == [{"Ref": f"{function}Role"}]]
    assert policy["Condition"] == "HasSearch"
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    return dict(statement)


def variables(function: str) -> dict[str, Any]:
    return dict(props(function)["Environment"]["Variables"])


@pytest.mark.parametrize(("consumer", "api", "spec"), CONTEXTS, ids=IDS)
def test_an_api_is_given_the_engine_and_its_consumer_only_the_search_sync_queue(
    consumer: str, api: str, spec: SearchMapping
) -> None:
    assert {"SEARCH_ENDPOINT", "SEARCH_SIGNING_SERVICE"} <= set(variables(api))
    assert not {"SEARCH_ENDPOINT", "SEARCH_SIGNING_SERVICE"} & set(variables(consumer))
    assert variables(consumer)["SEARCH_SYNC_QUEUE_URL"] == {"Fn::If": ["HasSearch", {"Ref": "SearchSyncQueue"}, ""]}
    sends = [s for s in props(consumer)["Policies"][0]["Statement"] if s["Action"] == "sqs:SendMessage"]
    queue = {"Fn::If": ["HasSearch", {"Fn::GetAtt": ["SearchSyncQueue", "Arn"]}, {"Ref": "AWS::NoValue"}]}
    assert queue in sends[0]["Resource"]


@pytest.mark.parametrize(("consumer", "api", "spec"), CONTEXTS, ids=IDS)
def test_an_api_may_only_read_and_search_its_own_index_of_the_created_domain(
    consumer: str, api: str, spec: SearchMapping
) -> None:
    statement = policy_of(api)
    assert sorted(statement["Action"]) == ["aoss:APIAccessAll", "es:ESHttpGet", "es:ESHttpPost"]
    created_domain = statement["Resource"]["Fn::If"][1]["Fn::Sub"]
    assert created_domain.endswith(f"domain/shopfeed-${{Environment}}/{spec.alias}/_search")


def test_the_worker_is_given_the_engine_and_its_queue_and_may_write_but_never_delete() -> None:
    assert {"SEARCH_ENDPOINT", "SEARCH_SIGNING_SERVICE"} <= set(variables(WORKER))
    assert variables(WORKER)["SEARCH_SYNC_QUEUE_URL"] == {"Ref": "SearchSyncQueue"}
    statement = policy_of(WORKER)
    assert "es:ESHttpDelete" not in statement["Action"]
    assert "es:ESHttpPut" in statement["Action"]
    # it holds failed writes back on its own queue, and touches nothing else
    (queue,) = props(WORKER)["Policies"][0]["Statement"]
    assert (queue["Action"], queue["Resource"]) == (
        "sqs:ChangeMessageVisibility",
        {"Fn::GetAtt": ["SearchSyncQueue", "Arn"]},
    )


def test_the_domain_admits_exactly_the_roles_given_search_policies() -> None:
    (statement,) = RESOURCES["SearchDomain"]["Properties"]["AccessPolicies"]["Statement"]
    admitted = {principal["Fn::GetAtt"][0] for principal in statement["Principal"]["AWS"]}
    granted = {p["Properties"]["Roles"][0]["Ref"] for p in SEARCH_POLICIES.values()}
    assert admitted == granted == {f"{api}Role" for _, api, _ in CONTEXTS} | {f"{WORKER}Role"}


def test_the_worker_writes_exactly_the_indexes_the_contexts_declare() -> None:
    assert INDEXES == {"products": PRODUCTS, "posts": POSTS}


def test_the_worker_is_given_every_setting_without_a_default() -> None:
    required = {name.upper() for name, field in SearchSyncWorkerSettings.model_fields.items() if field.is_required()}
    assert required <= set(variables(WORKER))


def test_the_search_sync_queue_outlasts_a_day_of_outage_before_its_dead_letter_queue() -> None:
    queue = props("SearchSyncQueue")
    redrive = queue["RedrivePolicy"]
    assert redrive["deadLetterTargetArn"] == {"Fn::GetAtt": ["SearchSyncDLQ", "Arn"]}
    # each failed receive waits BACKOFF.delay(n): 150 of them, 10 s doubling to 10 minutes, make ~24 h 10 min
    assert BACKOFF.outlasts(redrive["maxReceiveCount"]) >= DAY_S
    assert BACKOFF.outlasts(redrive["maxReceiveCount"]) < 2 * DAY_S  # a write the index refuses still ends there
    # SQS keeps a message 14 days at most, in the DLQ too (counted from when it was first sent)
    assert queue["MessageRetentionPeriod"] == props("SearchSyncDLQ")["MessageRetentionPeriod"] == 14 * DAY_S
    # Lambda asks for six times the function's timeout, so a batch in flight is never handed out twice
    assert queue["VisibilityTimeout"] >= 6 * props(WORKER)["Timeout"]
    for name in ("SearchSyncQueue", "SearchSyncDLQ"):
        assert props(name)["SqsManagedSseEnabled"] is True, name


def test_the_worker_reports_each_failed_write_on_its_own_and_caps_requests_to_the_engine() -> None:
    (event,) = props(WORKER)["Events"].values()
    assert event["Type"] == "SQS"
    assert event["Properties"]["Queue"] == {"Fn::GetAtt": ["SearchSyncQueue", "Arn"]}
    assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # a batch above ten messages needs a batching window
    assert event["Properties"]["BatchSize"] <= 10 or event["Properties"]["MaximumBatchingWindowInSeconds"] >= 1
    assert event["Properties"]["ScalingConfig"]["MaximumConcurrency"] >= 2  # Lambda's minimum


@pytest.mark.parametrize(
    ("alarm", "metric", "queue"),
    [
        ("SearchSyncDLQDepthAlarm", "ApproximateNumberOfMessagesVisible", "SearchSyncDLQ"),
        ("SearchSyncQueueAgeAlarm", "ApproximateAgeOfOldestMessage", "SearchSyncQueue"),
    ],
)
def test_search_sync_alarms_watch_the_dead_letter_queue_and_the_age_of_the_oldest_write(
    alarm: str, metric: str, queue: str
) -> None:
    assert props(alarm)["MetricName"] == metric
    assert props(alarm)["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [queue, "QueueName"]}}]


def test_without_search_there_is_no_search_sync_queue_worker_or_alarm() -> None:
    # every resource that names the queue, its DLQ or the worker exists only with search
    names = {"SearchSyncQueue", "SearchSyncDLQ", WORKER, f"{WORKER}Role", f"{WORKER}Logs"}
    tied = [name for name, r in RESOURCES.items() if name in names or cfn.references(r.get("Properties")) & names]
    # (the dashboard shows them in widgets of their own under HasSearch: tests/template/test_operations.py)
    others = ("CommerceStreamFunction", "FeedStreamFunction", "SearchDomain", "OperationsDashboard")
    tied = [name for name in tied if name not in others]
    assert len(tied) >= 9, tied
    assert {name: RESOURCES[name].get("Condition") for name in tied} == dict.fromkeys(tied, "HasSearch")
    assert TEMPLATE["Outputs"]["SearchSyncQueueUrl"]["Condition"] == "HasSearch"
