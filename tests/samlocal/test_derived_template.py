"""The template and environment sam local runs with (no container needed)."""

import pytest

from local import cfn
from local.engines import CALL_TIMEOUT_SCALE
from local.samlocal import env, template

pytestmark = [pytest.mark.samlocal, pytest.mark.xdist_group("samlocal")]


def test_derived_template_builds_functions_and_layers_for_the_given_architecture() -> None:
    # when
    derived = template.derive("x86_64")

    # then
    assert derived["Parameters"]["Architecture"]["Default"] == "x86_64"
    layers = [r for r in derived["Resources"].values() if r["Type"] == "AWS::Serverless::LayerVersion"]
    assert {layer["Metadata"]["BuildArchitecture"] for layer in layers} == {"x86_64"}
    assert cfn.load()["Resources"]["SharedLayer"]["Metadata"]["BuildArchitecture"] == "arm64"


def test_derived_template_declares_every_variable_of_the_env_vars_file() -> None:
    # when
    derived = template.derive("x86_64")

    # then
    declared = derived["Globals"]["Function"]["Environment"]["Variables"]
    assert set(env.names()) <= set(declared)


def test_derived_template_wraps_only_http_functions_in_the_local_authorizer() -> None:
    # when
    resources = template.derive("x86_64")["Resources"]

    # then
    api = resources["CommerceApiFunction"]["Properties"]
    assert api["Handler"] == template.AUTHORIZER_HANDLER
    assert api["Environment"]["Variables"]["SAMLOCAL_HANDLER"] == "app.lambda_handler"
    assert api["Layers"] == [{"Ref": template.AUTHORIZER_LAYER}]
    assert resources["CommerceStreamFunction"]["Properties"]["Handler"] == "app.lambda_handler"


def test_env_vars_point_loopback_endpoints_at_the_container_host() -> None:
    # when
    local = env.variables("http://127.0.0.1:8000", host="host.containers.internal")
    remote = env.variables("http://dynamodb.example:8000")

    # then
    assert local["AWS_ENDPOINT_URL_DYNAMODB"] == "http://host.containers.internal:8000"
    assert remote["AWS_ENDPOINT_URL_DYNAMODB"] == "http://dynamodb.example:8000"
    assert (local["COMMERCE_TABLE_NAME"], local["CURSOR_SECRET_ARN"]) == ("CommerceTable", "")


def test_containers_calls_wait_longer_than_the_local_stacks_functions() -> None:
    # when
    scale = env.variables("http://127.0.0.1:8000")["CALL_TIMEOUT_SCALE"]

    # then sam local's containers, reaching the engines through the container network beside the rest
    # of `make test`, wait longer than the local stack's functions before a call times out
    assert float(scale) > float(CALL_TIMEOUT_SCALE)
