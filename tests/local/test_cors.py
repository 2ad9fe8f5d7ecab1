"""CORS at the local gateway, as API Gateway does it for an HTTP API with a CorsConfiguration: the
gateway answers preflights itself, and decorates the answers to allowed origins."""

import json
from typing import Any

import pytest

from local import cfn
from local.auth import AUDIENCE, JwtAuthorizer, SigningKey, issuer_for
from local.gateway import ApiGateway, Cors, HttpRequest
from local.lambdas import LocalFunction
from local.stack import _cors
from tests.local.test_gateway import EchoFunction

ISSUER = issuer_for(3000)
APP = "https://app.example"
PREFLIGHT = [("Access-Control-Request-Method", "POST"), ("Access-Control-Request-Headers", "authorization")]


def template_cors(**parameters: str) -> Cors | None:
    template = cfn.load()
    return _cors(template, cfn.Resolver(template, parameters=dict(parameters), stand_ins=True))


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> SigningKey:
    return SigningKey.load_or_create(tmp_path_factory.mktemp("state"))


def gateway(key: SigningKey, echo: Any, cors: Cors | None) -> ApiGateway:
    routes = cfn.http_api_routes()
    function = LocalFunction("CommerceApiFunction", echo)
    authorizer = JwtAuthorizer(ISSUER, [AUDIENCE], {key.kid: key.public_key})
    return ApiGateway(routes, {r.function: function.invoke for r in routes}, {"Jwt": authorizer}, cors=cors)


def test_the_template_allows_no_origin_by_default_and_exactly_the_listed_ones_when_given() -> None:
    assert template_cors() is None
    cors = template_cors(AllowedOrigins=f"{APP},http://localhost:5173")
    assert cors is not None
    assert cors.origins == {APP, "http://localhost:5173"}
    assert {"Authorization", "Idempotency-Key", "If-Match"} <= set(cors.headers)
    assert {"ETag", "Location", "Idempotent-Replayed"} <= set(cors.expose)


def test_a_preflight_from_an_allowed_origin_is_answered_by_the_gateway_without_token_or_function(
    key: SigningKey,
) -> None:
    # given an API allowing the app's origin
    echo = EchoFunction()
    api = gateway(key, echo, template_cors(AllowedOrigins=APP))

    # when the browser sends its preflight for a POST with a token (it sends no token itself)
    response = api.handle(HttpRequest("OPTIONS", "/orders", [("Origin", APP), *PREFLIGHT]))

    # then the gateway allows it, and neither the authorizer nor the function ran
    assert response.status == 204
    assert response.header("access-control-allow-origin") == APP
    assert "POST" in str(response.header("access-control-allow-methods")).split(",")
    assert {"authorization", "idempotency-key", "if-match"} <= set(
        str(response.header("access-control-allow-headers")).split(",")
    )
    assert response.header("access-control-max-age") == "600"
    assert echo.events == []


def test_a_preflight_from_another_origin_gets_no_allow_headers(key: SigningKey) -> None:
    api = gateway(key, EchoFunction(), template_cors(AllowedOrigins=APP))
    response = api.handle(HttpRequest("OPTIONS", "/orders", [("Origin", "https://evil.example"), *PREFLIGHT]))
    assert response.status == 204
    assert not [k for k, _ in response.headers if k.startswith("access-control-")]


def test_without_cors_a_preflight_is_a_request_with_no_route(key: SigningKey) -> None:
    api = gateway(key, EchoFunction(), template_cors())
    response = api.handle(HttpRequest("OPTIONS", "/orders", [("Origin", APP), *PREFLIGHT]))
    assert (response.status, json.loads(response.body)) == (404, {"message": "Not Found"})


def test_answers_to_an_allowed_origin_carry_the_allow_and_expose_headers_and_never_the_functions_own(
    key: SigningKey,
) -> None:
    # given a function that sets its own CORS header (ignored by API Gateway once CORS is configured)
    def function(event: dict[str, Any], context: Any) -> dict[str, Any]:
        headers = {"access-control-allow-origin": "*", "etag": '"3"'}
        return {"statusCode": 200, "headers": headers, "body": "{}"}

    api = gateway(key, function, template_cors(AllowedOrigins=APP))
    token = [("Authorization", f"Bearer {key.mint(ISSUER, 'U100', [])}")]

    # when the app and another origin call a route, and the app calls without a token
    allowed = api.handle(HttpRequest("GET", "/products/P-1", [("Origin", APP), *token]))
    other = api.handle(HttpRequest("GET", "/products/P-1", [("Origin", "https://evil.example"), *token]))
    refused = api.handle(HttpRequest("GET", "/products/P-1", [("Origin", APP)]))

    # then the app may read the answer and its ETag; the other origin's answer allows nobody
    assert [v for k, v in allowed.headers if k == "access-control-allow-origin"] == [APP]
    assert "etag" in str(allowed.header("access-control-expose-headers")).split(",")
    assert not [k for k, _ in other.headers if k.startswith("access-control-")]
    # and the gateway's own 401 is readable by the app too (it can tell a login is needed)
    assert (refused.status, refused.header("access-control-allow-origin")) == (401, APP)
