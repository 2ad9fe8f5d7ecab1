"""Bounds read before any schema: a body's size, an object's members, the listed errors. A refusal's
size never grows with the request's, and nothing is written."""

import json
from typing import Any

import pytest
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from local.harness.client import ApiClient
from local.harness.factories import product_body
from shopfeed.commerce import bootstrap
from shopfeed.commerce.routes import products
from shopfeed.platform.errors import BodyTooLarge, MalformedBody, UnsupportedMediaType
from shopfeed.platform.http import MAX_LISTED_ERRORS, build_resolver
from shopfeed.platform.request_body import MAX_BODY_BYTES, MAX_OBJECT_MEMBERS, json_object_body
from tests.unit.fakes import InMemoryCommerce

JSON = {"content-type": "application/json"}


@pytest.fixture
def admin(store: InMemoryCommerce) -> ApiClient:
    app: APIGatewayHttpResolver = build_resolver(products.router)
    app.dependency_overrides[bootstrap.repository] = lambda: store
    return ApiClient(lambda event, context: app.resolve(event, context), sub="U-ADMIN").as_user("U-ADMIN", "admin")


def test_a_body_past_the_bound_is_refused_before_it_is_parsed() -> None:
    with pytest.raises(BodyTooLarge):
        json_object_body(JSON, json.dumps({"name": "x" * MAX_BODY_BYTES}), False)


def test_an_object_with_more_members_than_any_request_is_refused_before_validation() -> None:
    many = {f"m{n}": n for n in range(MAX_OBJECT_MEMBERS + 1)}
    with pytest.raises(MalformedBody, match="members"):
        json_object_body(JSON, json.dumps({"lines": [many]}), False)
    assert json_object_body(JSON, json.dumps(dict(list(many.items())[:MAX_OBJECT_MEMBERS])), False) is not None


@pytest.mark.parametrize("encoding", ["gzip", "br", "deflate, gzip"])
def test_a_compressed_body_is_an_unsupported_media_type(encoding: str) -> None:
    with pytest.raises(UnsupportedMediaType):
        json_object_body(JSON | {"Content-Encoding": encoding}, "{}", False)
    assert json_object_body(JSON | {"content-encoding": "identity"}, "{}", False) == {}


@pytest.mark.parametrize(
    ("body", "status"),
    [
        pytest.param({f"unknown{n}": n for n in range(300_000)}, 413, id="a 5 MB body of unknown members"),
        pytest.param({f"unknown{n}": n for n in range(1_000)}, 400, id="a thousand unknown members"),
        pytest.param({f"unknown{n}": n for n in range(25)}, 422, id="twenty-five unknown members"),
    ],
)
def test_a_huge_or_wide_body_gets_a_small_answer_and_writes_nothing(
    admin: ApiClient, store: InMemoryCommerce, body: dict[str, Any], status: int
) -> None:
    # when
    answer = admin.post("/products", product_body("P-RED-TSHIRT") | body)
    # then
    assert answer.status == status, answer.text[:500]
    assert len(answer.text) < 8_000
    assert store.get_product("P-RED-TSHIRT") is None


def test_the_listed_errors_are_capped_and_counted(admin: ApiClient) -> None:
    # when
    answer = admin.post("/products", {f"unknown{n}": n for n in range(25)})
    # then
    assert answer.status == 422
    problem = answer.json
    assert len(problem["errors"]) == MAX_LISTED_ERRORS
    assert problem["error_count"] > MAX_LISTED_ERRORS
