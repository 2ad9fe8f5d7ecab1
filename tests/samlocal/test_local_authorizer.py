"""samlocal_authorizer: the claims start-api cannot give, as API Gateway's JWT authorizer passes them."""

import copy
import importlib
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from local.harness.apigw import sample
from local.samlocal.template import AUTHORIZER_SOURCE
from tests.samlocal.helpers import bearer

pytestmark = [pytest.mark.samlocal, pytest.mark.xdist_group("samlocal")]
received: list[dict[str, Any]] = []


def echo(event: dict[str, Any], context: Any) -> dict[str, Any]:
    received.append(event)
    return {"statusCode": 200}


@pytest.fixture
def authorizer(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(AUTHORIZER_SOURCE))
    monkeypatch.setenv("SAMLOCAL_HANDLER", f"{__name__}.echo")
    # A layer module: on /opt/python in the container, importable here from its source directory.
    module = importlib.import_module("samlocal_authorizer")
    module._target.cache_clear()
    received.clear()
    yield module
    module._target.cache_clear()


def start_api_event(headers: dict[str, str]) -> dict[str, Any]:
    """An event as start-api builds it: no authorizer in the request context."""
    event = copy.deepcopy(sample("api/get_product.json"))
    event["requestContext"].pop("authorizer")
    event["headers"] = {name.lower(): value for name, value in headers.items()}
    return event


def test_local_authorizer_passes_the_token_claims_as_the_http_api_does(authorizer: ModuleType) -> None:
    # when
    answer = authorizer.lambda_handler(start_api_event(bearer("U900", "admin", "ops")), None)

    # then
    assert answer == {"statusCode": 200}
    claims = received[0]["requestContext"]["authorizer"]["jwt"]["claims"]
    assert (claims["sub"], claims["cognito:groups"]) == ("U900", "[admin ops]")


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Basic dXNlcjpwdw=="}, {"Authorization": "Bearer not-a-jwt"}],
    ids=["no-token", "not-bearer", "malformed"],
)
def test_local_authorizer_answers_401_without_a_usable_token(authorizer: ModuleType, headers: dict[str, str]) -> None:
    # when
    answer = authorizer.lambda_handler(start_api_event(headers), None)

    # then
    assert answer["statusCode"] == 401
    assert received == []


def test_local_authorizer_answers_401_for_an_expired_token(
    authorizer: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given
    headers = bearer("U100")
    monkeypatch.setattr(time, "time", lambda: 4_000_000_000.0)

    # when
    answer = authorizer.lambda_handler(start_api_event(headers), None)

    # then
    assert answer["statusCode"] == 401


def test_local_authorizer_leaves_events_that_carry_claims_unchanged(authorizer: ModuleType) -> None:
    # given
    event = copy.deepcopy(sample("api/place_order.json"))

    # when
    authorizer.lambda_handler(copy.deepcopy(event), None)

    # then
    assert received == [event]
