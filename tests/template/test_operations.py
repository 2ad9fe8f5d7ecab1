"""Operating the stack: safe deploys, alarms that reach someone, the dashboard, cost tags, production sizes.

Every test iterates over what the template holds (functions, queues, tables, their GSIs), so a resource
added later without its deployment preference, alarm, widget or tags fails here.
"""

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from local import cfn, ops_block

ROOT = cfn.ROOT
TEMPLATE = cfn.load()
RESOURCES = TEMPLATE["Resources"]
FUNCTIONS = sorted(cfn.resources("AWS::Serverless::Function"))
QUEUES = sorted(cfn.resources("AWS::SQS::Queue"))
TABLES = sorted(cfn.resources("AWS::DynamoDB::Table"))
ALARMS = cfn.resources("AWS::CloudWatch::Alarm")
API_FUNCTIONS = ops_block.api_functions(RESOURCES)
SCHEDULE_EVENTS = {"Schedule", "ScheduleV2"}
CHOSEN_TOPIC = [{"Fn::If": ["HasAlarmTopic", {"Ref": "AlarmTopicArn"}, {"Ref": "AlarmTopic"}]}]
TOPIC_ARN = "arn:aws:sns:us-east-1:123456789012:pager"
# Where each taggable type keeps its tags (SAM functions and HTTP APIs take theirs from Globals).
TAGGED = {
    "AWS::DynamoDB::Table": "Tags",
    "AWS::SQS::Queue": "Tags",
    "AWS::S3::Bucket": "Tags",
    "AWS::Logs::LogGroup": "Tags",
    "AWS::SNS::Topic": "Tags",
    "AWS::KMS::Key": "Tags",
    "AWS::SecretsManager::Secret": "Tags",
    "AWS::OpenSearchService::Domain": "Tags",
    "AWS::Events::EventBus": "Tags",
    "AWS::Cognito::UserPool": "UserPoolTags",
    "AWS::WAFv2::WebACL": "Tags",
    "AWS::CloudFront::Distribution": "Tags",
    "AWS::KinesisFirehose::DeliveryStream": "Tags",
}
TAGGED_BY_GLOBALS = {"AWS::Serverless::Function": "Function", "AWS::Serverless::HttpApi": "HttpApi"}
# Types that take no tags, or whose cost no tag splits: a new type must be placed in one of the two lists.
NOT_TAGGED = {
    "AWS::Serverless::LayerVersion",  # a layer version takes no tags
    "AWS::Cognito::UserPoolClient",
    "AWS::Cognito::UserPoolGroup",
    "AWS::SQS::QueuePolicy",
    "AWS::S3::BucketPolicy",
    "AWS::SNS::TopicPolicy",
    "AWS::SNS::Subscription",
    "AWS::IAM::Policy",
    "AWS::Logs::ResourcePolicy",
    "AWS::Events::Rule",  # rules are free; the bus carries the tags
    "AWS::CloudWatch::Dashboard",  # takes no tags
    "AWS::Logs::LogStream",  # takes no tags; its log group carries them
    "AWS::Lambda::Permission",  # takes no tags
    "AWS::IAM::Role",  # IAM is free (SAM's generated roles get tags through PropagateTags anyway)
    "AWS::CloudWatch::Alarm",  # $0.10 a month each; tagging them would touch every alarm block for no bill line
}


def _resolver(**parameters: Any) -> cfn.Resolver:
    return cfn.Resolver(TEMPLATE, parameters=dict(parameters), stand_ins=True)


def _samconfig(environment: str) -> dict[str, str]:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())
    overrides = config[environment]["deploy"]["parameters"]["parameter_overrides"]
    return dict(pair.split("=", 1) for pair in overrides.split())


def _dimensions(alarm: dict[str, Any]) -> list[dict[str, Any]]:
    """Every metric an alarm reads (directly or inside metric math), as {name, dimensions}."""
    props = alarm["Properties"]
    stats = [props] + [m["MetricStat"]["Metric"] for m in props.get("Metrics", []) if "MetricStat" in m]
    return [
        {"metric": s.get("MetricName"), "namespace": s.get("Namespace"), "dimensions": s.get("Dimensions", [])}
        for s in stats
        if "MetricName" in s
    ]


def _event_types(function: str) -> set[str]:
    return {e["Type"] for e in (RESOURCES[function]["Properties"].get("Events") or {}).values()}


def _rollback_alarms(function: str) -> list[str]:
    preference = cfn.function_properties(function, TEMPLATE)["DeploymentPreference"]
    return [ref["Ref"] for ref in preference["Alarms"]]


def _deployment_type(function: str, **parameters: Any) -> str:
    preference = cfn.function_properties(function, TEMPLATE)["DeploymentPreference"]
    resolved: str = _resolver(**parameters).resolve(preference["Type"])
    return resolved


# -- the operations block ------------------------------------------------------------------------


def test_the_generated_operations_block_matches_the_resources() -> None:
    # when the block is rendered again from the template's functions, APIs, tables, GSIs and queues
    text = cfn.TEMPLATE.read_text()

    # then it is the block the template holds (a new resource means: run `make ops-block`)
    assert ops_block.current(text) == ops_block.render(TEMPLATE), "stale operations block: run `make ops-block`"


def test_a_new_index_or_function_makes_the_block_stale_until_regenerated(tmp_path: Path) -> None:
    # given the template with one more GSI, as another change would add it
    text = cfn.TEMPLATE.read_text()
    added = text.replace(
        "        - IndexName: Catalog\n",
        "        - IndexName: NewIndex\n"
        "          KeySchema: [{AttributeName: catalog_pk, KeyType: HASH}]\n"
        "          Projection: {ProjectionType: KEYS_ONLY}\n"
        "        - IndexName: Catalog\n",
    )
    path = tmp_path / "template.yaml"
    path.write_text(added)

    # then the check refuses it, and regenerating writes the index's alarm and nothing else changes
    assert ops_block.main(["ops_block", str(path), "--check"]) == 1
    assert ops_block.main(["ops_block", str(path)]) == 0
    regenerated = path.read_text()
    assert "  CommerceTableNewIndexThrottlesAlarm:" in regenerated
    assert regenerated.split(ops_block.BEGIN)[0] == added.split(ops_block.BEGIN)[0]
    assert ops_block.main(["ops_block", str(path), "--check"]) == 0

    # and a new function gets its rollback alarm and its widget
    template = copy.deepcopy(TEMPLATE)
    template["Resources"]["NewFunction"] = {"Type": "AWS::Serverless::Function", "Properties": {}}
    block = ops_block.render(template)
    assert "  NewFunctionNewVersionErrorsAlarm:" in block
    assert '"FunctionName","${NewFunction}"' in block


# -- safe deploys --------------------------------------------------------------------------------


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_function_deploys_through_its_alias_rolled_back_by_its_new_versions_errors(function: str) -> None:
    # given the function as SAM sees it (Globals applied)
    props = cfn.function_properties(function, TEMPLATE)
    assert props["AutoPublishAlias"] == "live"
    assert props["DeploymentPreference"]["PassthroughCondition"] is True

    # then one of its rollback alarms counts the errors of the version the deploy published, on the alias
    version = {"Name": "ExecutedVersion", "Value": {"Fn::GetAtt": [function, "Version.Version"]}}
    alias = {"Name": "Resource", "Value": {"Fn::Sub": f"${{{function}}}:live"}}
    watched = [
        name
        for name in _rollback_alarms(function)
        for metric in _dimensions(ALARMS[name])
        if metric["metric"] == "Errors" and version in metric["dimensions"] and alias in metric["dimensions"]
    ]
    assert watched, f"{function} has no rollback alarm on its new version's errors"
    # and the alarm exists exactly when the function does
    assert all(ALARMS[name].get("Condition") == RESOURCES[function].get("Condition") for name in watched)


@pytest.mark.parametrize("function", API_FUNCTIONS)
def test_api_functions_shift_by_canary_rolled_back_by_5xx_and_p99_latency(function: str) -> None:
    # by default a canary, all at once when gradual deploys are off (dev)
    assert _deployment_type(function).startswith(("Canary", "Linear"))
    assert _deployment_type(function, GradualDeploys="false") == "AllAtOnce"

    # rolled back by the API's 5xx and by the new version's p99 duration
    alarms = _rollback_alarms(function)
    assert "ApiServerErrorsAlarm" in alarms
    version = {"Name": "ExecutedVersion", "Value": {"Fn::GetAtt": [function, "Version.Version"]}}
    latency = [
        name
        for name in alarms
        if ALARMS[name]["Properties"].get("ExtendedStatistic") == "p99"
        and any(m["metric"] == "Duration" and version in m["dimensions"] for m in _dimensions(ALARMS[name]))
    ]
    assert latency, f"{function}: no p99 duration alarm on the new version"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_schedules_move_all_at_once_and_every_other_function_by_canary(function: str) -> None:
    kind = _event_types(function)
    if kind and kind <= SCHEDULE_EVENTS:
        # a tick every 5 minutes to a day: a 5-minute canary would see one run or none
        assert _deployment_type(function) == "AllAtOnce"
    else:
        assert _deployment_type(function).startswith(("Canary", "Linear")), function


def test_dev_deploys_all_at_once_and_prod_gradually() -> None:
    assert _samconfig("dev")["GradualDeploys"] == "false"
    assert _samconfig("prod")["GradualDeploys"] == "true"


# -- who gets paged ------------------------------------------------------------------------------


def test_the_stack_creates_an_encrypted_alarm_topic_unless_one_is_given() -> None:
    topic = RESOURCES["AlarmTopic"]
    key = RESOURCES["AlarmTopicKey"]
    assert topic["Condition"] == key["Condition"] == "CreatesAlarmTopic"
    assert _resolver().condition("CreatesAlarmTopic")
    assert not _resolver(AlarmTopicArn=TOPIC_ARN).condition("CreatesAlarmTopic")

    # encrypted with a key CloudWatch may use (the AWS managed SNS key admits no service)
    assert topic["Properties"]["KmsMasterKeyId"] == {"Ref": "AlarmTopicKey"}
    assert key["Properties"]["EnableKeyRotation"] is True
    statements = key["Properties"]["KeyPolicy"]["Statement"]
    cloudwatch = [s for s in statements if s["Principal"] == {"Service": "cloudwatch.amazonaws.com"}]
    assert cloudwatch
    assert {"kms:Decrypt", "kms:GenerateDataKey*"} <= set(cloudwatch[0]["Action"])


def test_an_alarm_email_subscribes_to_the_chosen_topic() -> None:
    subscription = RESOURCES["AlarmEmailSubscription"]
    assert subscription["Condition"] == "HasAlarmEmail"
    assert not _resolver().condition("HasAlarmEmail")
    assert _resolver(AlarmEmail="oncall@example.com").condition("HasAlarmEmail")

    props = subscription["Properties"]
    assert props["Protocol"] == "email"
    assert _resolver(AlarmEmail="oncall@example.com").resolve(props)["TopicArn"] == "AlarmTopic"
    assert _resolver(AlarmEmail="a@example.com", AlarmTopicArn=TOPIC_ARN).resolve(props)["TopicArn"] == TOPIC_ARN


def test_every_alarm_notifies_the_chosen_topic() -> None:
    for name, alarm in ALARMS.items():
        actions = alarm["Properties"]["AlarmActions"]
        assert actions == CHOSEN_TOPIC, name
        assert _resolver().resolve(actions) == ["AlarmTopic"], name
        assert _resolver(AlarmTopicArn=TOPIC_ARN).resolve(actions) == [TOPIC_ARN], name


# -- latency, GSIs, search, Contributor Insights ---------------------------------------------------


def test_every_gsi_of_every_table_has_its_own_throttle_alarm() -> None:
    # given every (table, index) the tables declare
    declared = {
        (table, index["IndexName"])
        for table in TABLES
        for index in RESOURCES[table]["Properties"].get("GlobalSecondaryIndexes") or ()
    }
    assert len(declared) > 10

    # when the alarms reading an index's read and write throttles are collected
    watched: dict[tuple[str, str], set[str]] = {}
    for alarm in ALARMS.values():
        for metric in _dimensions(alarm):
            dims = {d["Name"]: d["Value"] for d in metric["dimensions"]}
            if "GlobalSecondaryIndexName" in dims:
                key = (dims["TableName"]["Ref"], dims["GlobalSecondaryIndexName"])
                watched.setdefault(key, set()).add(metric["metric"])

    # then each index has both, and no alarm watches an index that is not there
    assert set(watched) == declared, set(watched) ^ declared
    assert all(metrics == {"ReadThrottleEvents", "WriteThrottleEvents"} for metrics in watched.values())


def test_every_http_api_has_a_p99_latency_alarm() -> None:
    for api in cfn.resources("AWS::Serverless::HttpApi"):
        alarms = [
            a
            for a in ALARMS.values()
            if a["Properties"].get("ExtendedStatistic") == "p99"
            and any(
                m["metric"] == "Latency" and {"Name": "ApiId", "Value": {"Ref": api}} in m["dimensions"]
                for m in _dimensions(a)
            )
        ]
        assert alarms, api
        assert alarms[0]["Properties"]["Threshold"] == {"Ref": "ApiLatencyThresholdMs"}


@pytest.mark.parametrize("table", TABLES)
def test_every_table_has_a_latency_alarm_over_its_request_operations(table: str) -> None:
    on_table = {"Name": "TableName", "Value": {"Ref": table}}
    operations = {
        next(d["Value"] for d in m["dimensions"] if d["Name"] == "Operation")
        for alarm in ALARMS.values()
        for m in _dimensions(alarm)
        if m["metric"] == "SuccessfulRequestLatency" and on_table in m["dimensions"]
    }
    assert {"GetItem", "Query", "PutItem", "UpdateItem", "TransactWriteItems"} <= operations


@pytest.mark.parametrize("table", TABLES)
def test_contributor_insights_is_on_for_every_table_unless_turned_off(table: str) -> None:
    specification = RESOURCES[table]["Properties"]["ContributorInsightsSpecification"]
    assert _resolver().resolve(specification) == {"Enabled": True}
    assert _resolver(**_samconfig("prod")).resolve(specification) == {"Enabled": True}
    assert _resolver(ContributorInsights="false").resolve(specification) == {"Enabled": False}


def test_the_search_domain_has_health_alarms_exactly_when_the_stack_creates_it() -> None:
    on_domain = {
        m["metric"]: name
        for name, alarm in ALARMS.items()
        for m in _dimensions(alarm)
        if {"Name": "DomainName", "Value": {"Ref": "SearchDomain"}} in m["dimensions"]
    }
    assert {"ClusterStatus.red", "ClusterStatus.yellow", "FreeStorageSpace", "JVMMemoryPressure"} <= set(on_domain)
    for alarm in on_domain.values():
        condition = ALARMS[alarm]["Condition"]
        assert not _resolver().condition(condition)
        assert _resolver(CreateSearchDomain="true", SearchInstanceCount=3).condition(condition)
    # one data node can never place a replica: yellow is its normal state, so no yellow alarm there
    yellow = ALARMS[on_domain["ClusterStatus.yellow"]]["Condition"]
    assert not _resolver(CreateSearchDomain="true", SearchInstanceCount=1).condition(yellow)


# -- dashboard -----------------------------------------------------------------------------------


def _dashboard_metrics(**parameters: Any) -> list[list[Any]]:
    (dashboard,) = cfn.resources("AWS::CloudWatch::Dashboard").values()
    body = json.loads(_resolver(**parameters).resolve(dashboard["Properties"]["DashboardBody"]))
    return [metric for widget in body["widgets"] for metric in widget.get("properties", {}).get("metrics", [])]


def _shown(metrics: list[list[Any]], name: str, value: str) -> bool:
    return any(m[1] == name and value in m for m in metrics)


def test_the_dashboard_shows_the_golden_signals_of_every_function_queue_and_table() -> None:
    # with every optional resource present (search on), the body is JSON CloudWatch can read
    metrics = _dashboard_metrics(CreateSearchDomain="true")

    for function in FUNCTIONS:
        for signal in ("Invocations", "Errors", "Throttles", "Duration"):
            assert _shown(metrics, signal, function), f"{function} {signal} not on the dashboard"
    for function in ops_block.stream_functions(RESOURCES):
        assert _shown(metrics, "IteratorAge", function), function
    for queue in QUEUES:
        for signal in ("ApproximateNumberOfMessagesVisible", "ApproximateAgeOfOldestMessage"):
            assert _shown(metrics, signal, f"{queue}.QueueName"), f"{queue} {signal} not on the dashboard"
    for table in TABLES:
        for signal in ("ConsumedWriteCapacityUnits", "WriteThrottleEvents", "SuccessfulRequestLatency"):
            assert _shown(metrics, signal, table), f"{table} {signal} not on the dashboard"
    assert _shown(metrics, "Latency", "HttpApi")
    # the outbox lag: how far the relay reads behind, and what the sweeper had to re-drive
    assert _shown(metrics, "OutboxEventRedriven", "shopfeed")
    assert _shown(metrics, "IteratorAge", "CommerceStreamFunction")


def test_the_dashboard_leaves_out_the_widgets_of_resources_the_stack_does_not_create() -> None:
    metrics = _dashboard_metrics()
    assert not _shown(metrics, "Invocations", "SearchSyncWorkerFunction")
    assert not _shown(metrics, "JVMMemoryPressure", "SearchDomain")


# -- cost allocation tags ------------------------------------------------------------------------


def test_every_resource_type_is_either_tagged_or_said_untaggable() -> None:
    unknown = {r["Type"] for r in RESOURCES.values()} - TAGGED.keys() - TAGGED_BY_GLOBALS.keys() - NOT_TAGGED
    assert not unknown, f"decide whether these take cost tags (TAGGED or NOT_TAGGED): {unknown}"


def test_every_taggable_resource_carries_the_cost_allocation_tags() -> None:
    wanted = {"Project": {"Ref": "Project"}, "CostCenter": {"Ref": "CostCenter"}}
    missing = []
    for name, resource in RESOURCES.items():
        if resource["Type"] not in TAGGED:
            continue
        tags = resource["Properties"].get(TAGGED[resource["Type"]]) or {}
        if isinstance(tags, list):
            tags = {tag["Key"]: tag["Value"] for tag in tags}
        if any(tags.get(key) != value for key, value in wanted.items()):
            missing.append(name)
    assert not missing, f"resources without Project/CostCenter tags: {missing}"
    for section in TAGGED_BY_GLOBALS.values():
        assert TEMPLATE["Globals"][section]["Tags"] == wanted, section
    assert TEMPLATE["Globals"]["Function"]["PropagateTags"] is True
    # and no function overrides the global tags with a map of its own
    assert not [f for f in FUNCTIONS if "Tags" in RESOURCES[f]["Properties"]]


# -- production sizes ----------------------------------------------------------------------------


def test_search_domain_sizes_are_parameters_with_production_values_in_prod() -> None:
    sizes = ("ClusterConfig", "EBSOptions")
    config = RESOURCES["SearchDomain"]["Properties"]
    dev = _resolver(CreateSearchDomain="true").resolve_keys(config, sizes)
    assert dev["ClusterConfig"]["InstanceCount"] == 1
    assert dev["ClusterConfig"]["ZoneAwarenessEnabled"] is False
    assert dev["ClusterConfig"]["DedicatedMasterEnabled"] is False
    assert "DedicatedMasterCount" not in dev["ClusterConfig"]

    prod_parameters = _samconfig("prod")
    prod = _resolver(CreateSearchDomain="true", **prod_parameters).resolve_keys(config, sizes)
    cluster = prod["ClusterConfig"]
    zones = int(cluster["ZoneAwarenessConfig"]["AvailabilityZoneCount"])
    assert cluster["ZoneAwarenessEnabled"] is True
    # OpenSearch Service refuses a zone-aware domain whose data nodes do not divide evenly among zones
    assert int(cluster["InstanceCount"]) % zones == 0
    assert cluster["DedicatedMasterEnabled"] is True
    assert int(cluster["DedicatedMasterCount"]) == 3
    assert not str(cluster["InstanceType"]).startswith("t3.")
    assert int(prod["EBSOptions"]["VolumeSize"]) > 10
