"""Every route of the API with a well-formed request, and the problem+json shape, for the HTTP edge tests
of both tiers (tests/unit on ports that log any call, tests/integration on moto)."""

from typing import Any

from local.harness.client import Answer, ApiClient
from local.harness.factories import idempotency_key, if_match, line, order_body, product_body, user_body

ORDER_ID = "01J00000000000000000000000"

# Every route of the API with a well-formed request: (method, path, body, query, headers).
ROUTES: list[tuple[str, str, Any, dict[str, Any], dict[str, str]]] = [
    ("POST", "/users", user_body(), {}, {}),
    ("GET", "/users/U100", None, {}, {}),
    ("PATCH", "/users/me", {"name": "Ada"}, {}, if_match('"1"')),
    ("POST", "/products", product_body(), {}, {}),
    ("GET", "/products/P-RED-TSHIRT", None, {}, {}),
    ("PATCH", "/products/P-RED-TSHIRT", {"name": "Tee"}, {}, if_match('"1"')),
    ("GET", "/products", None, {"category": "tshirts"}, {}),
    ("GET", "/search/products", None, {"q": "shirt"}, {}),
    ("POST", "/products/P-RED-TSHIRT/stock", {"quantity": 1}, {}, idempotency_key()),
    ("POST", "/orders", order_body(line()), {}, idempotency_key()),
    ("GET", f"/orders/{ORDER_ID}", None, {}, {}),
    ("GET", f"/orders/{ORDER_ID}/lines", None, {}, {}),
    ("GET", "/users/me/orders", None, {}, {}),
    ("GET", "/orders", None, {"status": "Placed", "month": "2026-10"}, {}),
    ("POST", f"/orders/{ORDER_ID}/cancel", None, {}, {}),
    (
        "POST",
        f"/orders/{ORDER_ID}/payments",
        {"amount": {"amount": 1999, "currency": "EUR"}, "payment_method": "tok_sandbox_visa"},
        {},
        idempotency_key(),
    ),
    ("GET", f"/orders/{ORDER_ID}/payments", None, {}, {}),
    ("GET", "/payments", None, {"status": "Pending"}, {}),
    ("POST", f"/orders/{ORDER_ID}/shipments", {"carrier": "dhl"}, {}, idempotency_key()),
    ("GET", f"/orders/{ORDER_ID}/shipments", None, {}, {}),
    ("GET", f"/orders/{ORDER_ID}/shipments/{ORDER_ID}", None, {}, {}),
    ("PATCH", f"/orders/{ORDER_ID}/shipments/{ORDER_ID}", {"status": "Shipped"}, {}, if_match('"1"')),
    ("GET", "/shipments", None, {"status": "Shipped", "carrier": "dhl", "month": "2026-10"}, {}),
    ("POST", "/posts", {"text": "hello", "tags": ["dynamodb"]}, {}, idempotency_key()),
    ("GET", f"/posts/{ORDER_ID}", None, {}, {}),
    ("DELETE", f"/posts/{ORDER_ID}", None, {}, {}),
    ("GET", "/users/U100/posts", None, {}, {}),
    ("GET", "/tags/dynamodb/posts", None, {}, {}),
    ("GET", "/search/posts", None, {"q": "sparse index", "tag": "dynamodb"}, {}),
    ("PUT", "/users/U100/followers/me", None, {}, {}),
    ("DELETE", "/users/U100/followers/me", None, {}, {}),
    ("GET", "/users/U100/followers", None, {}, {}),
    ("GET", "/users/U100/following", None, {}, {}),
    ("GET", "/feed", None, {}, {}),
    ("PUT", f"/posts/{ORDER_ID}/likes/me", None, {}, {}),
    ("DELETE", f"/posts/{ORDER_ID}/likes/me", None, {}, {}),
    ("GET", f"/posts/{ORDER_ID}/likes", None, {}, {}),
    ("POST", f"/posts/{ORDER_ID}/comments", {"text": "nice"}, {}, idempotency_key()),
    ("GET", f"/posts/{ORDER_ID}/comments", None, {}, {}),
    ("DELETE", f"/posts/{ORDER_ID}/comments/{ORDER_ID}", None, {}, {}),
    ("GET", "/notifications", None, {}, {}),
    ("POST", "/notifications/read", None, {}, {}),
    ("POST", f"/notifications/{ORDER_ID}/read", None, {}, {}),
    ("GET", "/leaderboards/authors", None, {"month": "2026-10"}, {}),
    ("POST", "/products/P-RED-TSHIRT/reviews", {"rating": 5, "title": "Soft"}, {}, {}),
    ("GET", "/products/P-RED-TSHIRT/reviews", None, {"sort": "rating"}, {}),
    ("GET", "/products/P-RED-TSHIRT/reviews/U100", None, {}, {}),
    ("PUT", "/products/P-RED-TSHIRT/reviews/me", {"rating": 4, "title": "Soft"}, {}, if_match('"1"')),
    ("DELETE", "/products/P-RED-TSHIRT/reviews/me", None, {}, {}),
    ("GET", "/users/U100/reviews", None, {}, {}),
    ("GET", "/inventory/snapshots", None, {"date": "2026-11-22"}, {}),
]


def route_id(route: tuple[str, str, Any, dict[str, Any], dict[str, str]]) -> str:
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
