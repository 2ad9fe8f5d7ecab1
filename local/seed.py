"""Demo data, made through the API like any client would (so it also proves the API works).

The playbook's sample values: customer U100, and two products an admin creates; for the feed, post
``abc123`` by U100 tagged ``dynamodb`` (post ids are server-made ULIDs, so ``abc123`` is the post's
Idempotency-Key: a second run replays the same post), U400 following U100, and a few more users,
follows and posts, likes and comments on those posts (so every feed list answers something). With an
ops token, two orders of U100 go through payments (the sandbox approves them): one stays Paid, the
other is shipped with DHL; then U100, a buyer of both products now, reviews them.
Safe to repeat: against a persistent engine a second run gets 409 already-exists
or a replay, which count as done.
"""

import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("local.seed")

DEMO_USER = "U100"
ADMIN_USER = "U-ADMIN"
OPS_USER = "U-OPS"

CUSTOMER = {"email": "u100@example.com", "name": "Demo Customer", "handle": "u100", "bio": "Ships the demo data."}
FEED_USERS = {
    "U200": {"email": "u200@example.com", "name": "Grace", "handle": "grace", "bio": "Likes indexes."},
    "U300": {"email": "u300@example.com", "name": "Edsger", "handle": "edsger"},
    "U400": {"email": "u400@example.com", "name": "Barbara", "handle": "barbara"},
}
FOLLOWS = (("U400", "U100"), ("U200", "U100"), ("U100", "U300"), ("U400", "U300"))
POSTS = (
    ("U100", "abc123", {"text": "Model the access patterns first, then the keys.", "tags": ["dynamodb"]}),
    ("U300", "def456", {"text": "Streams make the asynchronous half of a table.", "tags": ["dynamodb", "serverless"]}),
    ("U200", "ghi789", {"text": "A sparse index holds only what you will query.", "tags": ["dynamodb"]}),
)
# (user, post key): the post is the one written under that Idempotency-Key.
LIKES = (("U400", "abc123"), ("U200", "abc123"), ("U100", "def456"))
# (user, post key, comment Idempotency-Key, body)
COMMENTS = (
    ("U400", "abc123", "abc123-c1", {"text": "Keys second, indeed."}),
    ("U100", "ghi789", "ghi789-c1", {"text": "Sparse indexes are underrated."}),
)
# (Idempotency-Key of the order, product, what becomes of it): the keys make a second run replay them.
ORDERS = (("seed-paid", "P-RED-TSHIRT", "Paid"), ("seed-shipped", "P-BLK-CAP", "Shipped"))
# (product, review) by U100, once its orders are paid: only buyers review.
REVIEWS = (
    ("P-RED-TSHIRT", {"rating": 5, "title": "Soft and true to size", "text": "Washed twice, still bright red."}),
    ("P-BLK-CAP", {"rating": 4, "title": "Fits well", "text": "The strap could be longer."}),
)
PAYMENT_SETTLES_S = 30  # the stream, the payment queue and the worker: a second or two locally
PRODUCTS = (
    {
        "product_id": "P-RED-TSHIRT",
        "name": "Red T-Shirt",
        "description": "Cotton crew neck, red.",
        "category": "apparel",
        "price": {"amount": 1999, "currency": "EUR"},
        "available": 100,
    },
    {
        "product_id": "P-BLK-CAP",
        "name": "Black Cap",
        "description": "Six-panel cap, black.",
        "category": "accessories",
        "price": {"amount": 1499, "currency": "EUR"},
        "available": 50,
    },
)


@dataclass(frozen=True)
class Step:
    what: str
    method: str
    path: str
    body: Mapping[str, Any]
    token: str
    headers: Mapping[str, str] | None = None


class SeedFailed(RuntimeError):
    pass


def seed(
    base_url: str,
    user_token: str,
    admin_token: str,
    token_for: Callable[[str], str] | None = None,
    ops_token: str | None = None,
) -> list[str]:
    """Register U100 and create the demo products, and with ``token_for`` (a token of any user id) the
    feed's users, follows and posts, and with ``ops_token`` a paid and a shipped order and U100's
    reviews of what it bought; returns one phrase per step (created / already there)."""
    steps = [Step(f"user {DEMO_USER}", "POST", "/users", CUSTOMER, user_token)]
    steps += [Step(f"product {p['product_id']}", "POST", "/products", p, admin_token) for p in PRODUCTS]
    if token_for is not None:
        steps += _feed_steps(token_for)
    outcomes, answers = _run(base_url, steps)
    if token_for is not None:
        post_ids = {key: str(answers[f"post {key} by {author}"]["post_id"]) for author, key, _ in POSTS}
        outcomes += _run(base_url, _engagement_steps(token_for, post_ids))[0]
    if ops_token is not None:
        outcomes += [_order(base_url, user_token, ops_token, *spec) for spec in ORDERS]
        reviews = [
            Step(f"review of {product_id} by {DEMO_USER}", "POST", f"/products/{product_id}/reviews", body, user_token)
            for product_id, body in REVIEWS
        ]
        outcomes += _run(base_url, reviews)[0]
    return outcomes


def _order(base_url: str, user_token: str, ops_token: str, key: str, product_id: str, becomes: str) -> str:
    """One order of U100 taken through payment (and shipping): placed, paid, settled by the worker, then
    for "Shipped" a DHL parcel created and shipped. A second run finds it where the first left it."""
    product = next(p for p in PRODUCTS if p["product_id"] == product_id)
    line = {"product_id": product_id, "quantity": 1, "unit_price": product["price"]}
    order = _call(
        base_url, Step(f"order {key}", "POST", "/orders", {"lines": [line]}, user_token, {"Idempotency-Key": key})
    )
    path = f"/orders/{order['order_id']}"
    payment = {"amount": order["total"], "payment_method": "tok_sandbox_visa"}
    _call(
        base_url,
        Step(
            f"payment of {key}", "POST", f"{path}/payments", payment, user_token, {"Idempotency-Key": f"{key}-payment"}
        ),
    )
    status = _settled(base_url, path, user_token)
    if becomes == "Shipped" and status == "Paid":
        parcel = {"carrier": "dhl", "tracking_number": "JD014600006281230704"}
        created = _call(
            base_url,
            Step(
                f"parcel of {key}", "POST", f"{path}/shipments", parcel, ops_token, {"Idempotency-Key": f"{key}-parcel"}
            ),
        )
        moved = Step(
            f"parcel of {key} shipped",
            "PATCH",
            f"{path}/shipments/{created['shipment_id']}",
            {"status": "Shipped"},
            ops_token,
            {"If-Match": '"1"'},
        )
        status = _call(base_url, moved)["status"]
    return f"order {key} {status.lower()}"


def _settled(base_url: str, path: str, token: str) -> str:
    """The order's status once its payment is settled (no longer Placed)."""
    deadline = time.monotonic() + PAYMENT_SETTLES_S
    while time.monotonic() < deadline:
        status = str(_call(base_url, Step(f"order at {path}", "GET", path, {}, token))["status"])
        if status != "Placed":
            return status
        time.sleep(0.2)
    raise SeedFailed(
        f"the payment of {path} was not settled within {PAYMENT_SETTLES_S} s (is PaymentWorkerFunction running?)"
    )


def _call(base_url: str, step: Step) -> dict[str, Any]:
    status, answer = _send(base_url, step)
    if not 200 <= status < 300:
        raise SeedFailed(f"seeding {step.what}: {step.method} {step.path} answered {status}")
    return answer


def _run(base_url: str, steps: list[Step]) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """One phrase per step, and each step's answer body by what it did."""
    outcomes, answers = [], {}
    for step in steps:
        status, answers[step.what] = _send(base_url, step)
        if status == 409:
            outcomes.append(f"{step.what} already there")
        elif 200 <= status < 300:
            outcomes.append(f"{step.what} created")
        else:
            raise SeedFailed(f"seeding {step.what}: {step.method} {step.path} answered {status}")
    return outcomes, answers


def _feed_steps(token_for: Callable[[str], str]) -> list[Step]:
    steps = [Step(f"user {user}", "POST", "/users", body, token_for(user)) for user, body in FEED_USERS.items()]
    steps += [
        Step(f"{follower} follows {followee}", "PUT", f"/users/{followee}/followers/me", {}, token_for(follower))
        for follower, followee in FOLLOWS
    ]
    steps += [
        Step(f"post {key} by {author}", "POST", "/posts", body, token_for(author), {"Idempotency-Key": key})
        for author, key, body in POSTS
    ]
    return steps


def _engagement_steps(token_for: Callable[[str], str], post_ids: Mapping[str, str]) -> list[Step]:
    steps = [
        Step(f"{user} likes {key}", "PUT", f"/posts/{post_ids[key]}/likes/me", {}, token_for(user))
        for user, key in LIKES
    ]
    steps += [
        Step(
            f"{user} comments on {key}",
            "POST",
            f"/posts/{post_ids[key]}/comments",
            body,
            token_for(user),
            {"Idempotency-Key": comment_key},
        )
        for user, key, comment_key, body in COMMENTS
    ]
    return steps


# A 503 (a dependency the SDK could not get through to, as with ``--faults``) is sent again after its
# Retry-After, as a client should: creates carry their Idempotency-Key, the rest are idempotent.
UNAVAILABLE_ATTEMPTS = 5


def _send(base_url: str, step: Step) -> tuple[int, dict[str, Any]]:
    for _ in range(UNAVAILABLE_ATTEMPTS - 1):
        status, answer, retry_after = _send_once(base_url, step)
        if status != 503:
            return status, answer
        log.warning("%s %s: 503, again in %s s", step.method, step.path, retry_after)
        time.sleep(retry_after)
    return _send_once(base_url, step)[:2]


def _send_once(base_url: str, step: Step) -> tuple[int, dict[str, Any], float]:
    request = urllib.request.Request(
        base_url + step.path,
        data=json.dumps(step.body).encode() if step.method != "GET" else None,
        method=step.method,
        headers={
            "content-type": "application/json",
            "authorization": f"Bearer {step.token}",
            **(step.headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return int(response.status), (json.loads(raw) if raw else {}), 0.0
    except urllib.error.HTTPError as error:
        if error.code not in (409, 503):
            log.error("%s %s: %s", step.method, step.path, error.read().decode(errors="replace")[:500])
        return int(error.code), {}, min(float(error.headers.get("Retry-After") or 1), 5.0)
