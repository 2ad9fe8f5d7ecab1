"""Every route of the API with a well-formed request, and the problem+json shape, for the HTTP edge tests
of both tiers (tests/unit on ports that log any call, tests/integration on moto)."""

import json
from typing import Any

from local import cfn
from local.harness.client import Answer, ApiClient
from local.harness.factories import idempotency_key, if_match, line, order_body, product_body, user_body

ORDER_ID = "01J00000000000000000000000"

Route = tuple[str, str, Any, dict[str, Any], dict[str, str]]

# The routes that write, each with a well-formed request: (method, path, body, query, headers).
WRITES: list[Route] = [
    ("POST", "/users", user_body(), {}, {}),
    ("PATCH", "/users/me", {"name": "Ada"}, {}, if_match('"1"')),
    ("POST", "/products", product_body(), {}, {}),
    ("PATCH", "/products/P-RED-TSHIRT", {"name": "Tee"}, {}, if_match('"1"')),
    ("POST", "/products/P-RED-TSHIRT/stock", {"quantity": 1}, {}, idempotency_key()),
    ("POST", "/orders", order_body(line()), {}, idempotency_key()),
    ("POST", f"/orders/{ORDER_ID}/cancel", None, {}, {}),
    (
        "POST",
        f"/orders/{ORDER_ID}/payments",
        {"amount": {"amount": 1999, "currency": "EUR"}, "payment_method": "tok_sandbox_visa"},
        {},
        idempotency_key(),
    ),
    ("POST", f"/orders/{ORDER_ID}/shipments", {"carrier": "dhl"}, {}, idempotency_key()),
    ("PATCH", f"/orders/{ORDER_ID}/shipments/{ORDER_ID}", {"status": "Shipped"}, {}, if_match('"1"')),
    ("POST", "/posts", {"text": "hello", "tags": ["dynamodb"]}, {}, idempotency_key()),
    ("POST", "/media", {"content_type": "image/png"}, {}, {}),
    ("DELETE", f"/posts/{ORDER_ID}", None, {}, {}),
    ("PUT", "/users/U100/followers/me", None, {}, {}),
    ("DELETE", "/users/U100/followers/me", None, {}, {}),
    ("PUT", f"/posts/{ORDER_ID}/likes/me", None, {}, {}),
    ("DELETE", f"/posts/{ORDER_ID}/likes/me", None, {}, {}),
    ("POST", f"/posts/{ORDER_ID}/comments", {"text": "nice"}, {}, idempotency_key()),
    ("DELETE", f"/posts/{ORDER_ID}/comments/{ORDER_ID}", None, {}, {}),
    ("POST", "/notifications/read", None, {}, {}),
    ("POST", f"/notifications/{ORDER_ID}/read", None, {}, {}),
    ("POST", "/products/P-RED-TSHIRT/reviews", {"rating": 5, "title": "Soft"}, {}, {}),
    ("PUT", "/products/P-RED-TSHIRT/reviews/me", {"rating": 4, "title": "Soft"}, {}, if_match('"1"')),
    ("DELETE", "/products/P-RED-TSHIRT/reviews/me", None, {}, {}),
    ("PUT", "/users/me/cart/items/P-RED-TSHIRT", {"quantity": 2}, {}, {}),
    ("DELETE", "/users/me/cart/items/P-RED-TSHIRT", None, {}, {}),
    ("POST", "/users/me/cart/checkout", None, {}, idempotency_key()),
    ("PUT", "/products/P-RED-TSHIRT/inventory/MAIN", {"restock": 5, "buckets": 2}, {}, if_match('"1"')),
]

# The reads are derived from docs/openapi.json: every GET operation, its path parameters and required
# query parameters filled with these (or the first value the schema allows). A new read route needs no row.
PATH_EXAMPLES = {
    "user_id": "U100",
    "product_id": "P-RED-TSHIRT",
    "tag": "dynamodb",
    "order_id": ORDER_ID,
    "post_id": ORDER_ID,
    "shipment_id": ORDER_ID,
    "comment_id": ORDER_ID,
    "notification_id": ORDER_ID,
}
QUERY_EXAMPLES = {"category": "tshirts", "q": "shirt", "month": "2026-10", "carrier": "dhl", "date": "2026-11-22"}


def _example(parameter: dict[str, Any], schemas: dict[str, Any]) -> str:
    name = str(parameter["name"])
    examples = PATH_EXAMPLES if parameter["in"] == "path" else QUERY_EXAMPLES
    if name in examples:
        return examples[name]
    schema = parameter["schema"]
    if "$ref" in schema:
        schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
    if "const" in schema:
        return str(schema["const"])
    if schema.get("enum"):
        return str(schema["enum"][0])
    raise KeyError(f"no example for the {parameter['in']} parameter {name!r}: add one above")


def _reads(document: dict[str, Any]) -> list[Route]:
    reads: list[Route] = []
    schemas = document["components"]["schemas"]
    for path, methods in document["paths"].items():
        operation = methods.get("get")
        if operation is None:
            continue
        parameters = operation.get("parameters", [])
        filled = path
        for parameter in (p for p in parameters if p["in"] == "path"):
            filled = filled.replace("{" + parameter["name"] + "}", _example(parameter, schemas))
        query = {p["name"]: _example(p, schemas) for p in parameters if p["in"] == "query" and p.get("required")}
        reads.append(("GET", filled, None, query, {}))
    return reads


# Every route of the API with a well-formed request.
ROUTES: list[Route] = WRITES + _reads(json.loads((cfn.ROOT / "docs" / "openapi.json").read_text()))


def route_id(route: Route) -> str:
    return f"{route[0]} {route[1]}"


def send(
    client: ApiClient, method: str, path: str, body: Any, query: dict[str, Any], headers: dict[str, str]
) -> Answer:
    return client.request(method, path, body, query=query, headers=headers)


def assert_problem(answer: Answer, status: int) -> None:
    """An RFC 9457 problem document: its status, a type URI, a title and a detail."""
    assert answer.status == status
    assert answer.content_type == "application/problem+json"
    problem = answer.json
    assert problem["status"] == status
    assert problem["type"].startswith("https://")
    assert isinstance(problem["title"], str)
    assert problem["title"]
    assert isinstance(problem["detail"], str)
    assert problem["detail"]
