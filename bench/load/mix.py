"""The traffic mix of ``make load``: the routes it calls, how often, and which answers are refusals.

Standard library only: the locustfile runs in Locust's own tool environment and imports this module
there, and the project's tests and the driver read it in the project's.
"""

import base64
import json
from typing import Any
from urllib.parse import quote

# Route templates as docs/openapi.json names them: every request is reported under its route's
# template, never its concrete path, so the report has one line per route.
REGISTER = "POST /users"
LIST_PRODUCTS = "GET /products"
GET_PRODUCT = "GET /products/{product_id}"
SEARCH_PRODUCTS = "GET /search/products"
PLACE_ORDER = "POST /orders"
PAY_ORDER = "POST /orders/{order_id}/payments"
CREATE_POST = "POST /posts"
FOLLOW = "PUT /users/{user_id}/followers/me"
LIKE = "PUT /posts/{post_id}/likes/me"
HOME_FEED = "GET /feed"
NOTIFICATIONS = "GET /notifications"
# Set-up, made by the driver before the load (not part of it).
CREATE_PRODUCT = "POST /products"

# How often a user does each, relative to the others: browsing and reading the feed dominate, as in a
# shop with a social feed; a "pay" pays the user's oldest unpaid order, so pays stay ≤ orders.
WEIGHTS = {
    LIST_PRODUCTS: 6,
    GET_PRODUCT: 10,
    SEARCH_PRODUCTS: 5,
    PLACE_ORDER: 4,
    PAY_ORDER: 3,
    CREATE_POST: 3,
    FOLLOW: 2,
    LIKE: 5,
    HOME_FEED: 10,
    NOTIFICATIONS: 4,
}
# Every route a run reports (each user registers once, then does the weighted actions).
ROUTES = (REGISTER, *WEIGHTS)

# Answers the API gives by design under load, reported on lines of their own and not as errors: an order
# for more than is left (409 naming the product), a user already registered (a deployed stack's Cognito
# sign-up registers its users; a second run's identities), and API Gateway's throttling on any route.
REFUSALS = {(PLACE_ORDER, 409), (REGISTER, 409)}
THROTTLED = 429

OK, REFUSED, ERROR = "ok", "refused", "error"


def judge(route: str, status: int) -> str:
    """OK for a 2xx, REFUSED for an expected refusal, ERROR for anything else (every 5xx, any other 4xx,
    and a 3xx or 1xx the API never answers)."""
    if 200 <= status < 300:
        return OK
    if (route, status) in REFUSALS or status == THROTTLED:
        return REFUSED
    return ERROR


def refusal_name(route: str, status: int, title: str) -> str:
    """The report line of a refusal: its route, status and problem title (a bounded set per route)."""
    return f"{route} → {status} {title}".strip()


def path(route: str, **parameters: str) -> str:
    """The concrete path of ``route`` (``"GET /products/{product_id}"``) with its parameters filled in."""
    template = route.split(" ", 1)[1]
    return template.format_map({name: quote(value, safe="") for name, value in parameters.items()})


def method(route: str) -> str:
    return route.split(" ", 1)[0]


def subject(token: str) -> str:
    """The ``sub`` of a JWT, read without checking its signature: only to know which user a token is (the
    API checks it); a load run never trusts it for anything else."""
    payload = token.split(".")[1]
    claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return str(claims["sub"])
