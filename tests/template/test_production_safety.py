"""What makes the template safe to run in production: limits, retention, logs, alarms, rules, checkov.

Each test reads template.yaml as CloudFormation would, resolving intrinsics with the parameters'
defaults (what a deploy without overrides gets) unless it says otherwise.
"""

import json
import subprocess
import tomllib
from typing import Any

import pytest

from local import cfn

ROOT = cfn.ROOT
TEMPLATE = cfn.load()
RESOURCES = TEMPLATE["Resources"]
FUNCTIONS = sorted(cfn.resources("AWS::Serverless::Function"))
TABLES = sorted(cfn.resources("AWS::DynamoDB::Table"))
ALARMS = cfn.resources("AWS::CloudWatch::Alarm")
CHECKOV = ROOT / ".tools" / "bin" / "checkov"
# checkov runs here only (not in `make lint`): skips are justified in the template (Metadata.checkov.skip);
# --skip-download keeps it off the network (no Prisma Cloud lookups).
CHECKOV_ARGS = ("--file", "template.yaml", "--framework", "cloudformation", "--skip-download", "--quiet", "--compact")


def _resolved(logical_id: str, **parameters: Any) -> dict[str, Any]:
    properties = RESOURCES[logical_id]["Properties"]
    if RESOURCES[logical_id]["Type"] == "AWS::Serverless::Function":
        properties = cfn.function_properties(logical_id, TEMPLATE)
    resolver = cfn.Resolver(TEMPLATE, parameters=dict(parameters), stand_ins=True)
    resolved: dict[str, Any] = resolver.resolve(properties)
    return resolved


def _alarm_on(namespace: str, metric: str, dimension: dict[str, Any]) -> list[str]:
    """Alarms watching ``metric`` with ``dimension``, directly or inside a metric-math expression."""
    found = []
    for name, alarm in ALARMS.items():
        props = alarm["Properties"]
        stats = [props] + [m["MetricStat"]["Metric"] for m in props.get("Metrics", []) if "MetricStat" in m]
        for stat in stats:
            watched = (stat.get("Namespace"), stat.get("MetricName")) == (namespace, metric)
            if watched and dimension in stat.get("Dimensions", []):
                found.append(name)
    return found


def _rule_failures(**parameters: str) -> list[str]:
    """The AssertDescriptions of every template rule that refuses these parameter values."""
    resolver = cfn.Resolver(TEMPLATE, parameters=dict(parameters))
    failures = []
    for rule in TEMPLATE.get("Rules", {}).values():
        if "RuleCondition" in rule and not resolver.resolve(rule["RuleCondition"]):
            continue
        failures += [a["AssertDescription"] for a in rule["Assertions"] if not resolver.resolve(a["Assert"])]
    return failures


def _samconfig_parameters(environment: str) -> dict[str, str]:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())
    overrides = config[environment]["deploy"]["parameters"]["parameter_overrides"]
    return dict(pair.split("=", 1) for pair in overrides.split())


# -- data that must outlive the stack ------------------------------------------------------------


@pytest.mark.parametrize("logical_id", [*TABLES, "UserPool"])
def test_tables_and_the_user_pool_survive_a_stack_deletion_or_replacement(logical_id: str) -> None:
    # given a resource whose loss loses data (a new user pool gives every user a new sub)
    resource = RESOURCES[logical_id]

    # then CloudFormation keeps it when the stack is deleted or the resource replaced
    assert resource["DeletionPolicy"] == "Retain"
    assert resource["UpdateReplacePolicy"] == "Retain"


def test_deletion_protection_is_on_by_default_for_tables_and_the_user_pool() -> None:
    # when the template is deployed without overrides
    tables = [_resolved(table) for table in TABLES]
    pool = _resolved("UserPool")

    # then neither the tables nor the pool can be deleted by an API call
    assert all(table["DeletionProtectionEnabled"] is True for table in tables)
    assert pool["DeletionProtection"] == "ACTIVE"


def test_deletion_protection_can_be_turned_off_for_a_throwaway_stack() -> None:
    assert _resolved("CommerceTable", DeletionProtection="false")["DeletionProtectionEnabled"] is False
    assert _resolved("UserPool", DeletionProtection="false")["DeletionProtection"] == "INACTIVE"


def test_user_pool_client_does_not_reveal_whether_a_user_exists() -> None:
    assert RESOURCES["UserPoolClient"]["Properties"]["PreventUserExistenceErrors"] == "ENABLED"


# -- limits --------------------------------------------------------------------------------------


def test_http_api_allows_no_browser_origin_unless_some_are_given() -> None:
    # when deployed without AllowedOrigins: no CORS configuration, no origin allowed
    assert "CorsConfiguration" not in _resolved("HttpApi")

    # when given origins: exactly those, with the headers the API reads and the ones a browser must see
    cors = _resolved("HttpApi", AllowedOrigins="https://app.example,https://admin.example")["CorsConfiguration"]
    assert cors["AllowOrigins"] == ["https://app.example", "https://admin.example"]
    assert {"Authorization", "Content-Type", "Idempotency-Key", "If-Match"} == set(cors["AllowHeaders"])
    assert {"ETag", "Location", "Idempotent-Replayed", "Retry-After"} == set(cors["ExposeHeaders"])
    assert {"GET", "POST", "PUT", "PATCH", "DELETE"} <= set(cors["AllowMethods"])
    # the token travels in Authorization, never a cookie: no credentials, so no wildcard trouble
    assert "AllowCredentials" not in cors


def test_the_edge_limits_each_ip_and_each_token_and_exists_only_when_asked() -> None:
    # when deployed by default: no distribution, no web ACL (and no cost)
    for name in ("EdgeWebAcl", "EdgeDistribution"):
        assert RESOURCES[name]["Condition"] == "HasEdge"
    assert not cfn.Resolver(TEMPLATE, stand_ins=True).condition("HasEdge")

    # when asked for 300 requests a minute a client
    assert cfn.Resolver(TEMPLATE, parameters={"EdgeRateLimit": 300}, stand_ins=True).condition("HasEdge")
    acl = _resolved("EdgeWebAcl", EdgeRateLimit=300)
    rates = {
        rule["Name"]: rule["Statement"]["RateBasedStatement"]
        for rule in acl["Rules"]
        if "RateBasedStatement" in rule["Statement"]
    }
    # then one rule counts per address and one per bearer token, both blocking past the limit
    assert rates["RatePerIp"]["AggregateKeyType"] == "IP"
    assert rates["RatePerToken"]["CustomKeys"] == [
        {"Header": {"Name": "authorization", "TextTransformations": [{"Priority": 0, "Type": "NONE"}]}}
    ]
    assert {rate["Limit"] for rate in rates.values()} == {300}
    assert {rate["EvaluationWindowSec"] for rate in rates.values()} == {60}
    assert acl["Scope"] == "CLOUDFRONT"
    # and the distribution fronts the API through it, caching nothing, passing every method
    config = RESOURCES["EdgeDistribution"]["Properties"]["DistributionConfig"]
    assert config["WebACLId"] == {"Fn::GetAtt": ["EdgeWebAcl", "Arn"]}
    assert "${HttpApi}.execute-api" in config["Origins"][0]["DomainName"]["Fn::Sub"]
    behavior = config["DefaultCacheBehavior"]
    assert behavior["CachePolicyId"] == "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"  # managed CachingDisabled
    assert {"POST", "PUT", "PATCH", "DELETE"} <= set(behavior["AllowedMethods"])
    assert behavior["ViewerProtocolPolicy"] == "https-only"
    # and a rule keeps it to us-east-1, where CloudFront's web ACLs are made
    assert "EdgeLivesInUsEast1" in TEMPLATE["Rules"]


def test_http_api_throttles_every_route_by_default() -> None:
    # when deployed without overrides
    settings = _resolved("HttpApi")["DefaultRouteSettings"]

    # then the stage has a steady rate and a burst, both parameters
    assert settings["ThrottlingRateLimit"] > 0
    assert settings["ThrottlingBurstLimit"] >= settings["ThrottlingRateLimit"]
    raw = RESOURCES["HttpApi"]["Properties"]["DefaultRouteSettings"]
    assert raw == {
        "ThrottlingRateLimit": {"Ref": "ApiThrottlingRateLimit"},
        "ThrottlingBurstLimit": {"Ref": "ApiThrottlingBurstLimit"},
    }


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_function_has_reserved_concurrency_by_default(function: str) -> None:
    # when deployed without overrides, every function gets a reservation from its own parameter
    reserved = _resolved(function)["ReservedConcurrentExecutions"]
    assert isinstance(reserved, int)
    assert reserved > 0
    parameter = cfn.function_properties(function, TEMPLATE)["ReservedConcurrentExecutions"]["Fn::If"][1]["Ref"]
    assert TEMPLATE["Parameters"][parameter]["Type"] == "Number"

    # and 0 leaves the function in the account's shared pool rather than stopping it
    assert "ReservedConcurrentExecutions" not in _resolved(function, **{parameter: 0})


def test_stream_consumers_keep_capacity_the_api_cannot_take() -> None:
    # the API's reservation is its ceiling; the consumers' reservations are theirs whatever the API does
    api = _resolved("CommerceApiFunction")["ReservedConcurrentExecutions"]
    stream = _resolved("CommerceStreamFunction")["ReservedConcurrentExecutions"]
    assert api > 0
    assert stream > 0


# -- logs ----------------------------------------------------------------------------------------


def _log_group_with_retention(reference: dict[str, Any]) -> str:
    (logical_id,) = cfn.references(reference)
    group = RESOURCES[logical_id]
    assert group["Type"] == "AWS::Logs::LogGroup", logical_id
    assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}, logical_id
    return logical_id


def test_api_access_logs_are_json_lines_in_a_log_group_with_retention() -> None:
    # given the stage's access log settings
    settings = RESOURCES["HttpApi"]["Properties"]["AccessLogSettings"]

    # then they go to a log group with retention, one JSON object per request
    _log_group_with_retention(settings["DestinationArn"])
    line = json.loads(settings["Format"])
    assert {"requestId", "routeKey", "status", "responseLatency", "integrationError", "sub"} <= line.keys()


def test_every_function_logs_to_its_own_log_group_with_retention() -> None:
    # when each function's LoggingConfig is read with the globals applied
    groups = {
        function: _log_group_with_retention(cfn.function_properties(function, TEMPLATE)["LoggingConfig"]["LogGroup"])
        for function in FUNCTIONS
    }

    # then no function writes to Lambda's default group (kept forever) and no two share one
    assert len(set(groups.values())) == len(FUNCTIONS), groups
    assert cfn.function_properties(FUNCTIONS[0], TEMPLATE)["LoggingConfig"]["LogFormat"] == "JSON"


def test_log_retention_is_a_parameter_that_defaults_to_a_year() -> None:
    parameter = TEMPLATE["Parameters"]["LogRetentionDays"]
    assert parameter["Default"] == 365
    assert {14, 365} <= set(parameter["AllowedValues"])


# -- alarms --------------------------------------------------------------------------------------


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_function_has_an_errors_and_a_throttles_alarm(function: str) -> None:
    dimension = {"Name": "FunctionName", "Value": {"Ref": function}}
    assert _alarm_on("AWS/Lambda", "Errors", dimension), f"{function} has no Errors alarm"
    assert _alarm_on("AWS/Lambda", "Throttles", dimension), f"{function} has no Throttles alarm"


def test_api_server_errors_raise_an_alarm() -> None:
    (alarm,) = _alarm_on("AWS/ApiGateway", "5xx", {"Name": "ApiId", "Value": {"Ref": "HttpApi"}})
    props = ALARMS[alarm]["Properties"]
    assert (props["ComparisonOperator"], props["Threshold"]) == ("GreaterThanThreshold", 0)


@pytest.mark.parametrize("table", TABLES)
def test_every_table_has_a_read_and_write_throttling_alarm(table: str) -> None:
    dimension = {"Name": "TableName", "Value": {"Ref": table}}
    assert _alarm_on("AWS/DynamoDB", "ReadThrottleEvents", dimension)
    assert _alarm_on("AWS/DynamoDB", "WriteThrottleEvents", dimension)


def test_a_sweeper_that_fails_or_stops_running_raises_an_alarm() -> None:
    # given the alarm on successful sweeps (invocations minus errors)
    dimension = {"Name": "FunctionName", "Value": {"Ref": "OutboxSweeperFunction"}}
    invocations = _alarm_on("AWS/Lambda", "Invocations", dimension)
    errors = _alarm_on("AWS/Lambda", "Errors", dimension)
    (alarm,) = set(invocations) & set(errors)
    props = ALARMS[alarm]["Properties"]

    # then a period without any successful sweep fires it, including one with no data at all
    assert (props["ComparisonOperator"], props["Threshold"]) == ("LessThanThreshold", 1)
    assert props["TreatMissingData"] == "breaching"
    assert props["Metrics"][0]["Expression"] == "FILL(invocations, 0) - FILL(errors, 0)"


def test_every_alarm_says_where_its_runbook_is() -> None:
    # (which topic each alarm notifies: tests/template/test_operations.py)
    for name, alarm in ALARMS.items():
        assert "docs/operations.md" in alarm["Properties"]["AlarmDescription"], name


def test_operations_guide_explains_every_alarm() -> None:
    guide = (ROOT / "docs" / "operations.md").read_text()
    missing = [name for name in ALARMS if f"`{name}`" not in guide]
    assert not missing, f"docs/operations.md does not describe {missing}"


# -- parameters ----------------------------------------------------------------------------------


def test_an_external_issuer_without_an_audience_is_refused_before_deploying() -> None:
    # when an external issuer is given without an audience, a template rule refuses the parameters
    assert _rule_failures(JwtIssuer="https://issuer.example.com/", JwtAudience="")

    # while an issuer with its audience, and the stack's own user pool, pass
    assert not _rule_failures(JwtIssuer="https://issuer.example.com/", JwtAudience="shopfeed-api")
    assert not _rule_failures()


def test_snapstart_is_a_parameter_applied_to_the_published_versions_every_event_invokes() -> None:
    for function in FUNCTIONS:
        # given the function as SAM sees it: every event source invokes the `live` alias
        assert cfn.function_properties(function, TEMPLATE)["AutoPublishAlias"] == "live"

        # then SnapStart follows the parameter
        assert _resolved(function, SnapStart="true")["SnapStart"] == {"ApplyOn": "PublishedVersions"}
        assert _resolved(function)["SnapStart"] == {"ApplyOn": "None"}


def test_prod_config_deploys_the_safe_values() -> None:
    # given the parameters `make deploy ENV=prod` passes
    prod = _samconfig_parameters("prod")

    # then nothing is left to a default, and each safe setting is on
    assert prod["DeletionProtection"] == "true"
    assert prod["SnapStart"] == "true"
    assert int(prod["LogRetentionDays"]) >= 365
    assert int(prod["ApiThrottlingRateLimit"]) > 0
    assert int(prod["ApiThrottlingBurstLimit"]) >= int(prod["ApiThrottlingRateLimit"])
    for function in FUNCTIONS:
        parameter = cfn.function_properties(function, TEMPLATE)["ReservedConcurrentExecutions"]["Fn::If"][1]["Ref"]
        assert int(prod[parameter]) > 0, parameter
    assert set(prod) <= set(TEMPLATE["Parameters"]), set(prod) - set(TEMPLATE["Parameters"])


# -- checkov -------------------------------------------------------------------------------------


def test_every_checkov_skip_in_the_template_says_why() -> None:
    skips = [
        (name, skip)
        for name, resource in RESOURCES.items()
        for skip in ((resource.get("Metadata") or {}).get("checkov") or {}).get("skip", [])
    ]
    assert skips, "no skips found: the test reads the wrong place"
    for name, skip in skips:
        assert skip["id"].startswith(("CKV_", "CKV2_")), (name, skip)
        assert len(skip.get("comment", "").split()) >= 6, f"{name}: skip {skip['id']} gives no reason"


@pytest.mark.tooling
def test_checkov_finds_nothing() -> None:
    # when checkov checks the template
    result = subprocess.run(
        [str(CHECKOV), *CHECKOV_ARGS, "--output", "json"], cwd=ROOT, capture_output=True, text=True, check=False
    )

    # then it fails no check, and every skip it applied is one the template states
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    summary = json.loads(result.stdout)["summary"]
    assert (summary["failed"], summary["parsing_errors"]) == (0, 0), summary
    assert summary["passed"] > 0, summary
