"""The HTTP API emulation: routes of the template, payload-2.0 events, authorizer, responses."""

import base64
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model

from local import cfn
from local.auth import AUDIENCE, JwtAuthorizer, SigningKey, issuer_for
from local.dynamodb_local import free_port
from local.gateway import (
    LAMBDA_PAYLOAD_BYTES,
    ApiGateway,
    HttpRequest,
    HttpResponse,
    RouteTable,
    build_event,
    http_response,
)
from local.lambdas import LocalFunction
from local.schedules import Scheduler
from local.server import LocalPages, LocalServer
from shopfeed.platform.http import caller_from_event
from tests.support.servers import serve_in_thread

ISSUER = issuer_for(3000)


class EchoFunction:
    """Answers every request with 200 and keeps the events it got."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.events.append(event)
        return {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": json.dumps({"ok": True})}

    @property
    def last(self) -> dict[str, Any]:
        return self.events[-1]


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> SigningKey:
    return SigningKey.load_or_create(tmp_path_factory.mktemp("state"))


@pytest.fixture
def echo() -> EchoFunction:
    return EchoFunction()


@pytest.fixture
def gateway(key: SigningKey, echo: EchoFunction) -> ApiGateway:
    """The template's routes, every one answered by the echo function."""
    routes = cfn.http_api_routes()
    function = LocalFunction("CommerceApiFunction", echo)
    authorizer = JwtAuthorizer(ISSUER, [AUDIENCE], {key.kid: key.public_key})
    return ApiGateway(routes, {r.function: function.invoke for r in routes}, {"Jwt": authorizer})


@pytest.fixture
def auth(key: SigningKey) -> list[tuple[str, str]]:
    return [("Authorization", f"Bearer {key.mint(ISSUER, 'U100', ['admin', 'ops'])}")]


def test_routes_are_exactly_those_of_the_template() -> None:
    # given the template's route table
    table = RouteTable(cfn.http_api_routes())

    # then a literal segment beats a parameter, parameters are bound, and nothing else matches
    matched = table.match("GET", "/users/me/orders")
    assert matched is not None
    assert matched[0].key == "GET /users/me/orders"
    matched = table.match("GET", "/orders/01J0000000000000000000000A/lines")
    assert matched is not None
    assert matched[0].key == "GET /orders/{order_id}/lines"
    assert matched[1] == {"order_id": "01J0000000000000000000000A"}
    assert table.match("DELETE", "/orders/x") is None
    assert table.match("GET", "/orders/x/unknown") is None


def test_every_template_route_is_selected_by_a_path_made_from_it() -> None:
    # given the template's route table, and a path made from each route with a value in each parameter
    routes = cfn.http_api_routes()
    table = RouteTable(routes)
    for route in routes:
        path = "/".join("v" if part.startswith("{") else part for part in route.path.split("/"))
        # then that route answers it, whichever routes share its length or its first segment
        matched = table.match(route.method, path)
        assert matched is not None, route.key
        assert matched[0] == route


def test_a_parameter_in_the_first_segment_competes_with_literal_routes_of_the_same_length() -> None:
    # given routes whose first segment is a parameter beside literal ones, and the root
    table = RouteTable(
        [
            cfn.HttpRoute("GET", "/{tenant}/orders", "Tenant", None),
            cfn.HttpRoute("GET", "/users/orders", "Users", None),
            cfn.HttpRoute("GET", "/", "Root", None),
        ]
    )

    # then a literal first segment still meets the parameter route when its own does not match
    assert table.match("GET", "/users/orders")[0].function == "Users"  # type: ignore[index]
    assert table.match("GET", "/users/orders")[1] == {}  # type: ignore[index]
    assert table.match("GET", "/acme/orders")[1] == {"tenant": "acme"}  # type: ignore[index]
    assert table.match("GET", "/")[0].function == "Root"  # type: ignore[index]
    assert table.match("GET", "/users") is None


def test_the_most_specific_route_wins() -> None:
    # given overlapping routes, in an order that would mislead a first-match router
    table = RouteTable(
        [
            cfn.HttpRoute("ANY", "/{proxy+}", "Fallback", None),
            cfn.HttpRoute("GET", "/users/{user_id}", "Users", None),
            cfn.HttpRoute("ANY", "/users/me", "MeAny", None),
            cfn.HttpRoute("GET", "/users/me", "MeGet", None),
        ]
    )

    # then literal beats parameter beats greedy, and an exact method beats ANY
    assert [table.match("GET", p)[0].function for p in ("/users/me", "/users/U1", "/a/b/c")] == [  # type: ignore[index]
        "MeGet",
        "Users",
        "Fallback",
    ]
    assert table.match("PATCH", "/users/me")[0].function == "MeAny"  # type: ignore[index]
    assert table.match("GET", "/a/b/c")[1] == {"proxy": "a/b/c"}  # type: ignore[index]


def test_an_unknown_route_answers_api_gateways_not_found(gateway: ApiGateway, echo: EchoFunction) -> None:
    response = gateway.handle(HttpRequest("GET", "/nowhere"))
    assert (response.status, json.loads(response.body)) == (404, {"message": "Not Found"})
    assert echo.events == []


def test_a_request_without_a_token_is_refused_before_the_function(gateway: ApiGateway, echo: EchoFunction) -> None:
    # when a protected route is called anonymously
    response = gateway.handle(HttpRequest("GET", "/products/P-RED-TSHIRT"))

    # then API Gateway's own 401 comes back and the function never ran
    assert (response.status, json.loads(response.body)) == (401, {"message": "Unauthorized"})
    assert response.header("www-authenticate") is None
    assert echo.events == []


def test_a_bad_token_is_refused_with_the_reason_in_www_authenticate(gateway: ApiGateway, key: SigningKey) -> None:
    token = key.mint(ISSUER, "U100", audience="someone-else")
    response = gateway.handle(HttpRequest("GET", "/products/P1", [("Authorization", f"Bearer {token}")]))
    assert response.status == 401
    assert 'error_description="the token does not have a valid audience"' in (response.header("www-authenticate") or "")


def test_the_event_has_the_payload_2_0_shape(
    gateway: ApiGateway, echo: EchoFunction, auth: list[tuple[str, str]]
) -> None:
    # given a request with repeated query parameters, cookies and mixed-case headers
    headers = [*auth, ("Content-Type", "application/json"), ("X-Trace", "a"), ("x-trace", "b"), ("Cookie", "s=1; t=2")]
    body = json.dumps({"lines": []}).encode()

    # when it reaches the function
    gateway.handle(
        HttpRequest("POST", "/orders/01J0000000000000000000000A/cancel?x=1&x=2&y=", headers, body, "10.0.0.9")
    )

    # then the event is what HTTP API sends, valid for Powertools' model of it
    event = echo.last
    APIGatewayProxyEventV2Model.model_validate(event)
    assert event["version"] == "2.0"
    assert event["routeKey"] == "POST /orders/{order_id}/cancel"
    assert event["rawPath"] == "/orders/01J0000000000000000000000A/cancel"
    assert event["rawQueryString"] == "x=1&x=2&y="
    assert event["queryStringParameters"] == {"x": "1,2", "y": ""}
    assert event["pathParameters"] == {"order_id": "01J0000000000000000000000A"}
    assert event["headers"]["x-trace"] == "a,b"
    assert event["headers"]["content-type"] == "application/json"
    assert "cookie" not in event["headers"]
    assert event["cookies"] == ["s=1", "t=2"]
    assert event["body"] == '{"lines": []}'
    assert event["isBase64Encoded"] is False
    context = event["requestContext"]
    assert context["http"] == {
        "method": "POST",
        "path": "/orders/01J0000000000000000000000A/cancel",
        "protocol": "HTTP/1.1",
        "sourceIp": "10.0.0.9",
        "userAgent": "",
    }
    assert context["routeKey"] == event["routeKey"]
    assert context["stage"] == "$default"
    assert context["authorizer"]["jwt"]["claims"]["sub"] == "U100"
    assert context["authorizer"]["jwt"]["claims"]["cognito:groups"] == "[admin ops]"


def test_the_events_time_and_trace_are_the_second_it_came_in() -> None:
    # given two requests a quarter of a second and a second apart (the time text is formatted once a second)
    route = cfn.HttpRoute("GET", "/products", "CommerceApiFunction", None)
    request = HttpRequest("GET", "/products", [("Host", "127.0.0.1:3000")])
    moments = (1_700_000_000.25, 1_700_000_000.5, 1_700_000_001.0)
    events = [build_event(route, {}, request, {"host": "127.0.0.1:3000"}, None, None, "id", now=t) for t in moments]
    # then each carries its own epoch milliseconds, its second as HTTP API writes it, and a trace id of that second
    contexts = [event["requestContext"] for event in events]
    assert [c["timeEpoch"] for c in contexts] == [1_700_000_000_250, 1_700_000_000_500, 1_700_000_001_000]
    assert [c["time"] for c in contexts] == [
        "14/Nov/2023:22:13:20 +0000",
        "14/Nov/2023:22:13:20 +0000",
        "14/Nov/2023:22:13:21 +0000",
    ]
    traces = [event["headers"]["x-amzn-trace-id"] for event in events]
    assert [t[:16] for t in traces] == ["Root=1-6553f100-", "Root=1-6553f100-", "Root=1-6553f101-"]
    assert len(set(traces)) == 3


def test_optional_members_are_left_out_when_empty(
    gateway: ApiGateway, echo: EchoFunction, auth: list[tuple[str, str]]
) -> None:
    gateway.handle(HttpRequest("GET", "/products", auth))
    assert not {"queryStringParameters", "pathParameters", "body", "cookies"} & echo.last.keys()


def test_a_binary_body_arrives_base64_encoded(
    gateway: ApiGateway, echo: EchoFunction, auth: list[tuple[str, str]]
) -> None:
    gateway.handle(HttpRequest("POST", "/products", [*auth, ("content-type", "image/png")], b"\x89PNG"))
    assert echo.last["isBase64Encoded"] is True
    assert base64.b64decode(echo.last["body"]) == b"\x89PNG"


def test_a_function_error_is_api_gateways_internal_server_error(key: SigningKey, auth: list[tuple[str, str]]) -> None:
    # given a route whose function raises
    def broken(event: dict[str, Any], context: Any) -> Any:
        raise RuntimeError("boom")

    route = cfn.HttpRoute("GET", "/boom", "Broken", "Jwt")
    authorizer = JwtAuthorizer(ISSUER, [AUDIENCE], {key.kid: key.public_key})
    gateway = ApiGateway([route], {"Broken": LocalFunction("Broken", broken).invoke}, {"Jwt": authorizer})

    # when it is called
    response = gateway.handle(HttpRequest("GET", "/boom", auth))

    # then the client sees API Gateway's 500
    assert (response.status, json.loads(response.body)) == (500, {"message": "Internal Server Error"})


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"statusCode": 201, "headers": {"Location": "/x"}, "body": "{}", "cookies": ["a=1", "b=2"]},
            HttpResponse(
                201,
                [
                    ("location", "/x"),
                    ("set-cookie", "a=1"),
                    ("set-cookie", "b=2"),
                    ("content-type", "application/json"),
                ],
                b"{}",
            ),
        ),
        (
            {"statusCode": 200, "body": base64.b64encode(b"\x00\x01").decode(), "isBase64Encoded": True},
            HttpResponse(200, [("content-type", "application/json")], b"\x00\x01"),
        ),
        ({"hello": "world"}, HttpResponse(200, [("content-type", "application/json")], b'{"hello":"world"}')),
        (
            {"statusCode": "abc"},
            HttpResponse(500, [("content-type", "application/json")], b'{"message":"Internal Server Error"}'),
        ),
    ],
    ids=["response object", "base64 body", "inferred 200", "malformed"],
)
def test_function_results_become_http_responses(payload: Any, expected: HttpResponse) -> None:
    assert http_response(payload) == expected


@pytest.fixture
def server(gateway: ApiGateway, key: SigningKey, tmp_path: Path) -> Iterator[str]:
    """The gateway behind a real local HTTP server on a free port."""
    port = free_port()
    openapi = tmp_path / "openapi.json"
    openapi.write_text(json.dumps({"openapi": "3.1.0", "paths": {}}))
    ready = threading.Event()
    ready.set()
    url = f"http://127.0.0.1:{port}"
    pages = LocalPages(ready, ISSUER, key, lambda: {"api": url}, Scheduler([]), openapi, url)
    http = LocalServer(("127.0.0.1", port), gateway, pages)
    thread = serve_in_thread(http)
    yield url
    http.shutdown()
    http.server_close()
    thread.join(timeout=5)


def test_the_server_speaks_http_for_the_api_and_the_local_pages(
    server: str, echo: EchoFunction, auth: list[tuple[str, str]]
) -> None:
    # when the API and the local pages are requested over HTTP
    with requests.Session() as http:
        product = http.get(f"{server}/products/P-RED-TSHIRT", headers=dict(auth), timeout=5)
        anonymous = http.get(f"{server}/products/P-RED-TSHIRT", timeout=5)
        health = http.get(f"{server}/__local/health", timeout=5)
        openapi = http.get(f"{server}/__local/openapi.json", timeout=5)
        docs = http.get(f"{server}/__local/docs", timeout=5)
        jwks = http.get(f"{server}/__local/issuer/.well-known/jwks.json", timeout=5)

    # then each answers as documented
    assert (product.status_code, product.json()) == (200, {"ok": True})
    assert product.headers["apigw-requestid"]
    assert echo.last["pathParameters"] == {"product_id": "P-RED-TSHIRT"}
    assert anonymous.status_code == 401
    assert health.json() == {"status": "ready"}
    assert openapi.json()["servers"] == [{"url": server, "description": "local stack"}]
    assert "/__local/openapi.json" in docs.text
    assert jwks.json()["keys"][0]["kty"] == "RSA"


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        pytest.param(["readers admin"], set(), id="space-in-a-name"),
        pytest.param(["readers,admin"], {"readers,admin"}, id="comma-in-a-name"),
        pytest.param(["[admin]"], {"[admin]"}, id="brackets-in-a-name"),
        pytest.param(["admin "], set(), id="trailing-space"),
        pytest.param(["ops-viewers,ops"], {"ops-viewers,ops"}, id="ops-by-comma"),
        pytest.param(["readers", "admin"], {"readers", "admin"}, id="two-groups"),
    ],
)
def test_a_group_name_grants_exactly_itself_through_the_authorizer(
    gateway: ApiGateway, echo: EchoFunction, key: SigningKey, groups: list[str], expected: set[str]
) -> None:
    # given an issuer-signed token whose group names hold other names
    token = key.mint(ISSUER, "U100", groups)
    # when the authorizer has verified it and stringified its claims
    gateway.handle(HttpRequest("GET", "/products", [("Authorization", f"Bearer {token}")]))
    # then the function reads each group as the one name it is
    assert caller_from_event(echo.last).groups == expected


def test_a_body_that_is_not_utf8_reaches_the_function_as_its_bytes(
    gateway: ApiGateway, echo: EchoFunction, auth: list[tuple[str, str]]
) -> None:
    # given bytes that are not UTF-8, sent as JSON
    body = b'{"name": "caf\xe9"}'
    # when
    gateway.handle(HttpRequest("POST", "/products", [*auth, ("Content-Type", "application/json")], body))
    # then nothing is repaired: the function gets them base64-encoded, as they were sent
    assert echo.last["isBase64Encoded"] is True
    assert base64.b64decode(echo.last["body"]) == body


def test_a_request_or_a_response_past_lambdas_payload_limit_is_refused_as_in_aws(
    key: SigningKey, auth: list[tuple[str, str]]
) -> None:
    # given a function that answers whatever size it is asked for
    def sized(event: dict[str, Any], context: Any) -> dict[str, Any]:
        size = int((event.get("queryStringParameters") or {}).get("size", "2"))
        return {"statusCode": 200, "body": "x" * size}

    routes = cfn.http_api_routes()
    function = LocalFunction("CommerceApiFunction", sized)
    authorizer = JwtAuthorizer(ISSUER, [AUDIENCE], {key.kid: key.public_key})
    gateway = ApiGateway(routes, {r.function: function.invoke for r in routes}, {"Jwt": authorizer})
    big = b'{"name": "' + b"x" * LAMBDA_PAYLOAD_BYTES + b'"}'
    # when / then
    refused = gateway.handle(HttpRequest("POST", "/products", [*auth, ("Content-Type", "application/json")], big))
    assert (refused.status, json.loads(refused.body)) == (413, {"message": "Request Entity Too Large"})
    assert gateway.handle(HttpRequest("GET", f"/products?size={LAMBDA_PAYLOAD_BYTES + 1}", auth)).status == 500
    assert gateway.handle(HttpRequest("GET", "/products?size=1000", auth)).status == 200
