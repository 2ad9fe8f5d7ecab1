"""FeedTable, its stream consumer and the fanout queue and worker, as template.yaml declares them."""

import json
from typing import Any

import pytest

from local import cfn
from shopfeed.feed import items

RESOURCES = cfn.load()["Resources"]
FEED_FUNCTIONS = ("FeedStreamFunction", "FanoutWorkerFunction")


def props(name: str) -> dict[str, Any]:
    return dict(RESOURCES[name]["Properties"])


def event_of(function: str) -> dict[str, Any]:
    (event,) = props(function)["Events"].values()
    return dict(event)


def test_feed_table_is_hardened_like_the_commerce_table() -> None:
    feed, commerce = props("FeedTable"), props("CommerceTable")
    for setting in (
        "BillingMode",
        "DeletionProtectionEnabled",
        "StreamSpecification",
        "TimeToLiveSpecification",
        "PointInTimeRecoverySpecification",
        "SSESpecification",
        "KeySchema",
    ):
        assert feed[setting] == commerce[setting], setting
    assert feed["TimeToLiveSpecification"]["AttributeName"] == items.EXPIRES_AT


def test_the_feed_stream_filter_lets_in_new_and_removed_posts_follows_likes_comments_and_modified_posts() -> None:
    patterns = [
        json.loads(f["Pattern"]) for f in event_of("FeedStreamFunction")["Properties"]["FilterCriteria"]["Filters"]
    ]
    routed = [items.POST, items.FOLLOW, items.LIKE, items.COMMENT]
    # A post's MODIFY is for search sync alone (no like, comment or follow is ever modified).
    assert patterns == [
        {"eventName": ["INSERT"], "dynamodb": {"NewImage": {"entity_type": {"S": routed}}}},
        {"eventName": ["REMOVE"], "dynamodb": {"OldImage": {"entity_type": {"S": routed}}}},
        {"eventName": ["MODIFY"], "dynamodb": {"NewImage": {"entity_type": {"S": [items.POST]}}}},
    ]


def test_the_fanout_queue_hands_poison_messages_to_its_dead_letter_queue_after_five_receives() -> None:
    queue = props("FanoutQueue")
    assert queue["RedrivePolicy"] == {"deadLetterTargetArn": {"Fn::GetAtt": ["FanoutDLQ", "Arn"]}, "maxReceiveCount": 5}
    worker_timeout = props("FanoutWorkerFunction")["Timeout"]
    assert queue["VisibilityTimeout"] >= 6 * worker_timeout
    for name in ("FanoutQueue", "FanoutDLQ", "FeedStreamDLQ"):
        assert props(name)["SqsManagedSseEnabled"] is True, name


def test_the_fanout_worker_reports_each_failed_message_on_its_own() -> None:
    event = event_of("FanoutWorkerFunction")
    assert event["Type"] == "SQS"
    assert event["Properties"]["Queue"] == {"Fn::GetAtt": ["FanoutQueue", "Arn"]}
    assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


@pytest.mark.parametrize(
    ("alarm", "metric", "dimension"),
    [
        ("FeedStreamIteratorAgeAlarm", "IteratorAge", {"Ref": "FeedStreamFunction"}),
        (
            "FeedStreamDLQDepthAlarm",
            "ApproximateNumberOfMessagesVisible",
            {"Fn::GetAtt": ["FeedStreamDLQ", "QueueName"]},
        ),
        ("FanoutDLQDepthAlarm", "ApproximateNumberOfMessagesVisible", {"Fn::GetAtt": ["FanoutDLQ", "QueueName"]}),
        ("FanoutQueueAgeAlarm", "ApproximateAgeOfOldestMessage", {"Fn::GetAtt": ["FanoutQueue", "QueueName"]}),
    ],
)
def test_feed_alarms_watch_the_consumer_lag_the_dead_letter_queues_and_the_fanout_backlog(
    alarm: str, metric: str, dimension: dict[str, Any]
) -> None:
    spec = props(alarm)
    assert spec["MetricName"] == metric
    assert [d["Value"] for d in spec["Dimensions"]] == [dimension]


@pytest.mark.parametrize("function", FEED_FUNCTIONS)
def test_feed_functions_may_touch_only_the_feed_table_and_their_queues(function: str) -> None:
    allowed = {
        json.dumps(r, sort_keys=True)
        for r in (
            {"Fn::GetAtt": ["FeedTable", "Arn"]},
            {"Fn::Sub": "${FeedTable.Arn}/index/PostsByAuthor"},
            {"Fn::GetAtt": ["FanoutQueue", "Arn"]},
            {"Fn::GetAtt": ["FeedStreamDLQ", "Arn"]},
            {"Fn::If": ["HasSearch", {"Fn::GetAtt": ["SearchSyncQueue", "Arn"]}, {"Ref": "AWS::NoValue"}]},
        )
    }
    for statement in props(function)["Policies"][0]["Statement"]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        assert not [a for a in actions if "*" in a], statement
        assert {json.dumps(r, sort_keys=True) for r in resources} <= allowed, statement
        assert not {"dynamodb:Scan", "dynamodb:DeleteTable", "dynamodb:DeleteItem"} & set(actions), statement


def test_the_fanout_worker_reads_followers_and_posts_and_writes_entries_and_nothing_else() -> None:
    (table, index, queue) = props("FanoutWorkerFunction")["Policies"][0]["Statement"]
    assert sorted(table["Action"]) == [
        "dynamodb:BatchGetItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:GetItem",
        "dynamodb:Query",
    ]
    assert (index["Action"], index["Resource"]) == (
        "dynamodb:Query",
        {"Fn::Sub": "${FeedTable.Arn}/index/PostsByAuthor"},
    )
    assert queue["Action"] == "sqs:SendMessage"
