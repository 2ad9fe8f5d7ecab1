"""The authorization matrix: every route of docs/openapi.json × anonymous / other user / owner / admin / ops.

The table below is the contract, written out: for each operation, what each role gets. The test fails
when the document gains an operation the table does not cover, so a new route must take a row. A cell
is sent as a well-formed request through the local stack (gateway authorizer included) against a
resource the owner holds; a leak is a cell answered with more than the role may have: a success where
the table says refused, another user's private fields, or someone else's rows in a list.
"""

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests

from local.cfn import ROOT
from local.harness.factories import record_purchase
from tests.e2e.conftest import Client, LocalStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

ROLES = ("anonymous", "other user", "owner", "admin", "ops")

# Outcomes: a status, "public" (200 without private fields), "private" (200 with them), "own" (200, a
# list holding only the caller's rows).
# fmt: off
MATRIX: dict[str, tuple[int | str, ...]] = {
    #                                     anonymous other user owner      admin      ops
    "POST /users":                        (401,     409,       409,       409,       409),  # each is registered
    "GET /users/{user_id}":               (401,     "public",  "private", "private", "public"),
    "PATCH /users/me":                    (401,     200,       200,       200,       200),  # each edits their own
    "POST /products":                     (401,     403,       403,       201,       403),
    "GET /products/{product_id}":         (401,     200,       200,       200,       200),
    "PATCH /products/{product_id}":       (401,     403,       403,       200,       403),
    "GET /products":                      (401,     200,       200,       200,       200),
    "GET /search/products":               (401,     200,       200,       200,       200),
    "POST /products/{product_id}/stock":  (401,     403,       403,       201,       403),
    "POST /orders":                       (401,     201,       201,       201,       201),
    "GET /orders/{order_id}":             (401,     404,       200,       404,       200),
    "GET /orders/{order_id}/lines":       (401,     404,       200,       404,       200),
    "GET /orders/{order_id}/history":     (401,     404,       200,       404,       200),
    "GET /users/me/orders":               (401,     "own",     "own",     "own",     "own"),
    "GET /users/me/cart":                 (401,     "own",     "own",     "own",     "own"),  # each reads their own
    "PUT /users/me/cart/items/{product_id}": (401,  200,       200,       200,       200),  # each fills their own
    "DELETE /users/me/cart/items/{product_id}": (401, 200,     200,       200,       200),  # each empties their own
    "POST /users/me/cart/checkout":       (401,     201,       201,       201,       201),  # each checks out their own
    "GET /orders":                        (401,     403,       403,       403,       200),
    "POST /orders/{order_id}/cancel":     (401,     404,       200,       404,       200),
    "POST /orders/{order_id}/payments":   (401,     404,       202,       404,       403),  # the owner pays
    "GET /orders/{order_id}/payments":    (401,     404,       200,       404,       200),
    "GET /payments":                      (401,     403,       403,       403,       200),
    "POST /orders/{order_id}/shipments":  (401,     403,       403,       403,       201),
    "GET /orders/{order_id}/shipments":   (401,     404,       200,       404,       200),
    "GET /orders/{order_id}/shipments/{shipment_id}": (401, 404, 200,    404,       200),
    "PATCH /orders/{order_id}/shipments/{shipment_id}": (401, 403, 403,  403,       200),
    "GET /shipments":                     (401,     403,       403,       403,       200),
    "GET /feed":                          (401,     200,       200,       200,       200),  # each reads their own
    "POST /posts":                        (401,     201,       201,       201,       201),
    "POST /media":                        (401,     200,       200,       200,       200),  # a form for my own uploads
    "GET /posts/{post_id}":               (401,     200,       200,       200,       200),
    "DELETE /posts/{post_id}":            (401,     403,       204,       403,       403),  # the author only
    "GET /tags/{tag}/posts":              (401,     200,       200,       200,       200),
    "GET /search/posts":                  (401,     200,       200,       200,       200),
    "GET /users/{user_id}/posts":         (401,     200,       200,       200,       200),
    "GET /users/{user_id}/followers":     (401,     200,       200,       200,       200),
    "GET /users/{user_id}/following":     (401,     200,       200,       200,       200),
    "PUT /users/{user_id}/followers/me":  (401,     201,       422,       201,       201),  # no one follows themself
    "DELETE /users/{user_id}/followers/me": (401,   204,       204,       204,       204),  # idempotent
    "PUT /posts/{post_id}/likes/me":      (401,     201,       201,       201,       201),
    "DELETE /posts/{post_id}/likes/me":   (401,     204,       204,       204,       204),  # idempotent
    "GET /posts/{post_id}/likes":         (401,     200,       200,       200,       200),
    "POST /posts/{post_id}/comments":     (401,     201,       201,       201,       201),
    "GET /posts/{post_id}/comments":      (401,     200,       200,       200,       200),
    "GET /users/{user_id}/comments":      (401,     200,       200,       200,       200),  # comments are public
    "DELETE /posts/{post_id}/comments/{comment_id}": (401, 403, 204,     403,       403),  # its or the post's author
    "GET /notifications":                 (401,     "own",     "own",     "own",     "own"),
    "POST /notifications/read":           (401,     200,       200,       200,       200),  # each marks their own
    "POST /notifications/{notification_id}/read": (401, 404,   404,       404,       404),  # none is anyone's here
    "GET /leaderboards/authors":          (401,     403,       403,       403,       200),
    "POST /products/{product_id}/reviews": (401,    403,       201,       403,       403),  # the buyer only
    "GET /products/{product_id}/reviews": (401,     200,       200,       200,       200),
    "GET /products/{product_id}/reviews/{user_id}": (401, 200, 200,      200,       200),  # reviews are public
    "PUT /products/{product_id}/reviews/me": (401,  404,       200,       404,       404),  # each edits their own
    "DELETE /products/{product_id}/reviews/me": (401, 204,     204,       204,       204),  # each deletes their own
    "GET /users/{user_id}/reviews":       (401,     200,       200,       200,       200),
    "GET /inventory/snapshots":           (401,     403,       403,       403,       200),
    "GET /products/{product_id}/inventory": (401,   403,       403,       403,       200),
    "PUT /products/{product_id}/inventory/{warehouse}": (401, 403, 403,   200,       403),
}
# fmt: on

IDENTITIES = {
    "other user": ("U-MATRIX-OTHER", ()),
    "owner": ("U-MATRIX-OWNER", ()),
    "admin": ("U-MATRIX-ADMIN", ("admin",)),
    "ops": ("U-MATRIX-OPS", ("ops",)),
}
OWNER = IDENTITIES["owner"][0]
_NO_ONES = "01J00000000000000000000000"  # a notification id no role holds: marking it is 404 for each
OWNERS_CART_PRODUCT = "P-MATRIX-OWNERS-CART"  # only the owner puts it in their cart


def operations() -> list[str]:
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    return sorted(f"{method.upper()} {path}" for path, ops in document["paths"].items() for method in ops)


@dataclass
class World:
    """The resources the matrix reaches for: the owner's order(s), a product, everyone's client."""

    clients: dict[str, Client]
    product: dict[str, Any]
    stack: LocalStack
    paid_orders: dict[str, str] = field(default_factory=dict)

    def place(self, role: str = "owner") -> str:
        body = {
            "lines": [{"product_id": self.product["product_id"], "quantity": 1, "unit_price": self.product["price"]}]
        }
        placed = self.clients[role].post("/orders", json=body, headers={"Idempotency-Key": str(uuid.uuid4())})
        assert placed.status_code == 201, placed.text
        return str(placed.json()["order_id"])

    def publish(self) -> str:
        published = self.clients["owner"].post(
            "/posts", json={"text": "Matrix post", "tags": ["matrix"]}, headers={"Idempotency-Key": str(uuid.uuid4())}
        )
        assert published.status_code == 201, published.text
        return str(published.json()["post_id"])

    def comment(self) -> str:
        """The path of a comment the owner made on their own post."""
        post_id = self.publish()
        made = self.clients["owner"].post(
            f"/posts/{post_id}/comments",
            json={"text": "Matrix comment"},
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )
        assert made.status_code == 201, made.text
        return f"/posts/{post_id}/comments/{made.json()['comment_id']}"

    def bought(self) -> str:
        """The reviews path of a new product only the owner bought (a payment recorded as payments do)."""
        created = self.clients["admin"].post("/products", json=_product_body())
        assert created.status_code == 201, created.text
        product_id = created.json()["product_id"]
        record_purchase(OWNER, product_id, client=self.stack.dynamodb())
        return f"/products/{product_id}/reviews"

    def reviewed(self) -> str:
        """The reviews path of a new product the owner bought and reviewed."""
        reviews = self.bought()
        written = self.clients["owner"].post(reviews, json={"rating": 4, "title": "Matrix review"})
        assert written.status_code == 201, written.text
        return reviews

    def paid(self, purpose: str) -> str:
        """An order of the owner's, paid through the stack (the sandbox approves it): one per purpose."""
        if purpose not in self.paid_orders:
            order_id = self.place()
            order = self.clients["owner"].get(f"/orders/{order_id}").json()
            paying = self.clients["owner"].post(
                f"/orders/{order_id}/payments",
                json={"amount": order["total"], "payment_method": "tok_sandbox_visa"},
                headers={"Idempotency-Key": str(uuid.uuid4())},
            )
            assert paying.status_code == 202, paying.text
            deadline = time.monotonic() + 60
            while self.clients["owner"].get(f"/orders/{order_id}").json()["status"] != "Paid":
                assert time.monotonic() < deadline, f"order {order_id} was not paid within 60 s"
                time.sleep(0.3)
            self.paid_orders[purpose] = order_id
        return self.paid_orders[purpose]

    def shipment(self, purpose: str) -> str:
        """The path of a new parcel (ops made it) of the paid order kept for ``purpose``."""
        order_id = self.paid(purpose)
        made = self.clients["ops"].post(
            f"/orders/{order_id}/shipments", json={"carrier": "dhl"}, headers={"Idempotency-Key": str(uuid.uuid4())}
        )
        assert made.status_code == 201, made.text
        return str(made.headers["Location"])

    def in_owners_cart(self) -> bool:
        """Put a product only the owner's cart holds (each time a cell asks: a checkout empties it)."""
        created = self.clients["admin"].post("/products", json=_product_body(OWNERS_CART_PRODUCT, available=10_000))
        assert created.status_code in (201, 409), created.text
        put = self.clients["owner"].put(f"/users/me/cart/items/{OWNERS_CART_PRODUCT}", json={"quantity": 1})
        assert put.status_code == 200, put.text
        return True

    def etag(self, role: str, path: str) -> str:
        reader = self.clients["admin"] if path.startswith("/products") else self.clients[role]
        return str(reader.get(path).headers.get("ETag", '"1"'))


def _cell(world: World, operation: str, role: str) -> requests.Response:
    """One well-formed request of ``operation`` as ``role`` against the owner's resources."""
    client = world.clients[role]
    product_id = world.product["product_id"]
    key = {"Idempotency-Key": str(uuid.uuid4())}
    order_line = {"product_id": product_id, "quantity": 1, "unit_price": world.product["price"]}
    review = {"rating": 5, "title": f"{role} reviews"}
    send: dict[str, Callable[[], requests.Response]] = {
        "POST /users": lambda: client.post("/users", json={"email": "matrix@example.com", "name": "Matrix"}),
        "GET /users/{user_id}": lambda: client.get(f"/users/{OWNER}"),
        "PATCH /users/me": lambda: client.request(
            "PATCH", "/users/me", json={"name": f"{role} edits"}, headers={"If-Match": world.etag(role, "/users/me")}
        ),
        "POST /products": lambda: client.post("/products", json=_product_body()),
        "GET /products/{product_id}": lambda: client.get(f"/products/{product_id}"),
        "PATCH /products/{product_id}": lambda: client.request(
            "PATCH",
            f"/products/{product_id}",
            json={"description": f"{role} edits"},
            headers={"If-Match": world.etag(role, f"/products/{product_id}")},
        ),
        "GET /products": lambda: client.get("/products", params={"category": "matrix"}),
        "GET /search/products": lambda: client.get("/search/products", params={"q": "matrix"}),
        "POST /products/{product_id}/stock": lambda: client.post(
            f"/products/{product_id}/stock", json={"quantity": 1}, headers=key
        ),
        "POST /orders": lambda: client.post("/orders", json={"lines": [order_line]}, headers=key),
        "GET /orders/{order_id}": lambda: client.get(f"/orders/{world.place()}"),
        "GET /orders/{order_id}/lines": lambda: client.get(f"/orders/{world.place()}/lines"),
        "GET /orders/{order_id}/history": lambda: client.get(f"/orders/{world.place()}/history"),
        "GET /users/me/orders": lambda: client.get("/users/me/orders"),
        "GET /users/me/cart": lambda: world.in_owners_cart() and client.get("/users/me/cart"),
        "PUT /users/me/cart/items/{product_id}": lambda: client.put(
            f"/users/me/cart/items/{product_id}", json={"quantity": 1}
        ),
        "DELETE /users/me/cart/items/{product_id}": lambda: (
            world.in_owners_cart() and client.delete(f"/users/me/cart/items/{OWNERS_CART_PRODUCT}")
        ),
        "POST /users/me/cart/checkout": lambda: _check_out(client, product_id),
        "GET /orders": lambda: client.get("/orders", params={"status": "Placed"}),
        "POST /orders/{order_id}/cancel": lambda: client.post(f"/orders/{world.place()}/cancel"),
        "POST /orders/{order_id}/payments": lambda: _pay(client, world.place(), world.product["price"]),
        "GET /orders/{order_id}/payments": lambda: client.get(f"/orders/{world.place()}/payments"),
        "GET /payments": lambda: client.get("/payments", params={"status": "Pending"}),
        "POST /orders/{order_id}/shipments": lambda: client.post(
            f"/orders/{world.paid('ship')}/shipments", json={"carrier": "dhl"}, headers=key
        ),
        "GET /orders/{order_id}/shipments": lambda: client.get(f"/orders/{world.paid('list')}/shipments"),
        "GET /orders/{order_id}/shipments/{shipment_id}": lambda: client.get(world.shipment("read")),
        "PATCH /orders/{order_id}/shipments/{shipment_id}": lambda: _ship(client, world.shipment("move")),
        "GET /shipments": lambda: client.get("/shipments", params={"status": "Shipped", "carrier": "dhl"}),
        "GET /feed": lambda: client.get("/feed"),
        "POST /posts": lambda: client.post("/posts", json={"text": f"{role} posts"}, headers=key),
        "POST /media": lambda: client.post("/media", json={"content_type": "image/jpeg"}),
        "GET /posts/{post_id}": lambda: client.get(f"/posts/{world.publish()}"),
        "DELETE /posts/{post_id}": lambda: client.delete(f"/posts/{world.publish()}"),
        "GET /tags/{tag}/posts": lambda: client.get("/tags/matrix/posts"),
        "GET /search/posts": lambda: client.get("/search/posts", params={"q": "matrix", "tag": "matrix"}),
        "GET /users/{user_id}/posts": lambda: client.get(f"/users/{OWNER}/posts"),
        "GET /users/{user_id}/followers": lambda: client.get(f"/users/{OWNER}/followers"),
        "GET /users/{user_id}/following": lambda: client.get(f"/users/{OWNER}/following"),
        "PUT /users/{user_id}/followers/me": lambda: client.put(f"/users/{OWNER}/followers/me"),
        "DELETE /users/{user_id}/followers/me": lambda: _unfollow(client),
        "PUT /posts/{post_id}/likes/me": lambda: client.put(f"/posts/{world.publish()}/likes/me"),
        "DELETE /posts/{post_id}/likes/me": lambda: client.delete(f"/posts/{world.publish()}/likes/me"),
        "GET /posts/{post_id}/likes": lambda: client.get(f"/posts/{world.publish()}/likes"),
        "POST /posts/{post_id}/comments": lambda: client.post(
            f"/posts/{world.publish()}/comments", json={"text": f"{role} comments"}, headers=key
        ),
        "GET /posts/{post_id}/comments": lambda: client.get(f"/posts/{world.publish()}/comments"),
        "GET /users/{user_id}/comments": lambda: client.get(f"/users/{OWNER}/comments"),
        "DELETE /posts/{post_id}/comments/{comment_id}": lambda: client.delete(world.comment()),
        "GET /notifications": lambda: client.get("/notifications"),
        "POST /notifications/read": lambda: client.post("/notifications/read"),
        "POST /notifications/{notification_id}/read": lambda: client.post(f"/notifications/{_NO_ONES}/read"),
        "GET /leaderboards/authors": lambda: client.get("/leaderboards/authors", params={"month": "2026-10"}),
        "POST /products/{product_id}/reviews": lambda: client.post(world.bought(), json=review),
        "GET /products/{product_id}/reviews": lambda: client.get(world.reviewed(), params={"sort": "rating"}),
        "GET /products/{product_id}/reviews/{user_id}": lambda: client.get(f"{world.reviewed()}/{OWNER}"),
        "PUT /products/{product_id}/reviews/me": lambda: client.put(
            f"{world.reviewed()}/me", json=review, headers={"If-Match": '"1"'}
        ),
        "DELETE /products/{product_id}/reviews/me": lambda: client.delete(f"{world.reviewed()}/me"),
        "GET /users/{user_id}/reviews": lambda: client.get(f"/users/{OWNER}/reviews"),
        "GET /inventory/snapshots": lambda: client.get("/inventory/snapshots", params={"date": "2026-10-01"}),
        "GET /products/{product_id}/inventory": lambda: client.get(f"/products/{product_id}/inventory"),
        "PUT /products/{product_id}/inventory/{warehouse}": lambda: _restock_warehouse(world, client, product_id),
    }
    return send[operation]()


def _restock_warehouse(world: World, client: Client, product_id: str) -> requests.Response:
    # The inventory's ETag is the layout's version, read by ops (only ops read the inventory).
    version = world.clients["ops"].get(f"/products/{product_id}/inventory").headers.get("ETag", '"1"')
    return client.put(f"/products/{product_id}/inventory/MAIN", json={"restock": 1}, headers={"If-Match": version})


def _pay(client: Client, order_id: str, price: dict[str, Any]) -> requests.Response:
    body = {"amount": price, "payment_method": "tok_sandbox_visa"}
    return client.post(f"/orders/{order_id}/payments", json=body, headers={"Idempotency-Key": str(uuid.uuid4())})


def _check_out(client: Client, product_id: str) -> requests.Response:
    # Each role checks out a cart of their own; an anonymous caller is refused at the gateway anyway.
    client.put(f"/users/me/cart/items/{product_id}", json={"quantity": 1})
    return client.post("/users/me/cart/checkout", headers={"Idempotency-Key": str(uuid.uuid4())})


def _ship(client: Client, path: str) -> requests.Response:
    # A new parcel is at version 1; only ops may move it.
    return client.request("PATCH", path, json={"status": "Shipped"}, headers={"If-Match": '"1"'})


def _unfollow(client: Client) -> requests.Response:
    client.put(f"/users/{OWNER}/followers/me")  # refused for the owner: unfollowing no one is still 204
    return client.delete(f"/users/{OWNER}/followers/me")


def _product_body(product_id: str | None = None, available: int = 0) -> dict[str, Any]:
    return {
        "product_id": product_id or f"P-MATRIX-{uuid.uuid4().hex[:8].upper()}",
        "name": "Matrix Mug",
        "category": "matrix",
        "price": {"amount": 1200, "currency": "EUR"},
        "available": available,
    }


def _outcome(role: str, answer: requests.Response, expected: int | str) -> int | str:
    """What the cell got, in the table's terms (see MATRIX)."""
    if answer.status_code != 200 or isinstance(expected, int):
        return answer.status_code
    body = answer.json()
    if expected == "own" and "lines" in body:  # a cart: only the owner's holds the owner's product
        holds = OWNERS_CART_PRODUCT in [line["product_id"] for line in body["lines"]]
        return "own" if holds == (role == "owner") else "someone else's rows"
    if expected == "own":
        mine = IDENTITIES[role][0]
        return "own" if all(item["user_id"] == mine for item in body["items"]) else "someone else's rows"
    return "private" if body.get("email") is not None or body.get("name") is not None else "public"


@pytest.fixture(scope="module")
def world(local_stack: LocalStack) -> World:
    clients = {"anonymous": Client(local_stack, None)}
    for role, (subject, groups) in IDENTITIES.items():
        clients[role] = Client(local_stack, local_stack.token(subject, *groups))
        registered = clients[role].post("/users", json={"email": f"{subject.lower()}@example.com", "name": role})
        assert registered.status_code in (201, 409), registered.text
    created = clients["admin"].post("/products", json=_product_body(available=10_000))
    assert created.status_code == 201, created.text
    return World(clients, created.json(), local_stack)


def test_the_matrix_covers_every_operation_of_the_document() -> None:
    assert sorted(MATRIX) == operations()


@pytest.mark.parametrize("operation", sorted(MATRIX))
def test_every_role_gets_what_the_matrix_says_and_no_cell_leaks(world: World, operation: str) -> None:
    # given
    expected = dict(zip(ROLES, MATRIX[operation], strict=True))

    # when
    answers = {role: _cell(world, operation, role) for role in ROLES}

    # then
    got = {role: _outcome(role, answer, expected[role]) for role, answer in answers.items()}
    leaks = [role for role in ROLES if _is_leak(expected[role], got[role])]
    print(f"matrix {operation}: {len(ROLES)} cells, {len(leaks)} leaks")
    assert leaks == [], {role: answers[role].text[:300] for role in leaks}
    assert got == expected, {role: answers[role].text[:300] for role in ROLES if got[role] != expected[role]}
    assert answers["anonymous"].json() == {"message": "Unauthorized"}


def _is_leak(expected: int | str, got: int | str) -> bool:
    refused = isinstance(expected, int) and expected >= 400
    granted = got in (200, "private", "public", "own", 201) or got == "someone else's rows"
    return (refused and granted) or (expected in ("public", "own") and got in ("private", "someone else's rows"))


def test_no_one_but_the_owner_changed_the_owners_profile(world: World) -> None:
    # given: the matrix ran PATCH /users/me as every role (each on their own profile)
    # when
    owner = world.clients["owner"].get("/users/me").json()
    # then
    assert owner["name"] in ("owner", "owner edits")


def test_no_one_else_reads_or_changes_the_owners_cart(world: World) -> None:
    # given
    world.in_owners_cart()
    owner = world.clients["owner"]
    before = owner.get("/users/me/cart")

    # when every other role puts, removes and checks out the same product, each in their own cart
    for role in ("other user", "admin", "ops"):
        client = world.clients[role]
        client.put(f"/users/me/cart/items/{OWNERS_CART_PRODUCT}", json={"quantity": 7})
        assert _check_out(client, OWNERS_CART_PRODUCT).status_code == 201
        client.delete(f"/users/me/cart/items/{OWNERS_CART_PRODUCT}")

    # then
    after = owner.get("/users/me/cart")
    assert (after.json(), after.headers["ETag"]) == (before.json(), before.headers["ETag"])
    assert [line["quantity"] for line in after.json()["lines"] if line["product_id"] == OWNERS_CART_PRODUCT] == [1]
