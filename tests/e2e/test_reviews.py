"""Reviews over HTTP through the local stack: a buyer reviews, the CommerceTable stream's consumer
counts it, and the product shows its average once the stream has drained."""

import uuid
from typing import Any

import pytest

from local.harness.factories import record_purchase
from tests.e2e.conftest import Client, LocalStack
from tests.e2e.test_feed_fanout import eventually

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


def buyer(stack: LocalStack, product: dict[str, Any]) -> Client:
    """A user of their own whose payment of the product was recorded (as payments record it)."""
    user_id = f"U-E2E-BUYER-{uuid.uuid4().hex[:8]}"
    record_purchase(user_id, product["product_id"], client=stack.dynamodb())
    return Client(stack, stack.token(user_id))


def rating(client: Client, product: dict[str, Any]) -> dict[str, Any]:
    return dict(client.get(f"/products/{product['product_id']}").json()["rating"])


def test_a_buyers_review_shows_in_the_products_average_once_the_stream_drains(
    local_stack: LocalStack, product: dict[str, Any], customer: Client
) -> None:
    # given
    reviews = f"/products/{product['product_id']}/reviews"
    first, second = buyer(local_stack, product), buyer(local_stack, product)
    assert rating(customer, product) == {"count": 0, "average": None}
    # when two buyers review it (5 and 4 stars)
    written = [
        first.post(reviews, json={"rating": 5, "title": "Lovely mug", "text": "Keeps tea hot."}),
        second.post(reviews, json={"rating": 4, "title": "Good", "text": "A bit heavy."}),
    ]
    # then
    assert [w.status_code for w in written] == [201, 201], [w.text for w in written]
    shown = eventually(lambda: rating(customer, product), lambda r: r["count"] == 2)
    assert shown == {"count": 2, "average": 4.5}
    listed = customer.get(reviews, params={"sort": "rating"}).json()["items"]
    assert [(r["rating"], r["title"]) for r in listed] == [(5, "Lovely mug"), (4, "Good")]


def test_an_edit_and_a_delete_move_the_average_and_a_non_buyer_is_refused(
    local_stack: LocalStack, product: dict[str, Any], customer: Client
) -> None:
    # given one review of 1 star, counted
    reviews = f"/products/{product['product_id']}/reviews"
    author, other = buyer(local_stack, product), buyer(local_stack, product)
    assert author.post(reviews, json={"rating": 1, "title": "Chipped"}).status_code == 201
    assert other.post(reviews, json={"rating": 3, "title": "Fine"}).status_code == 201
    eventually(lambda: rating(customer, product), lambda r: r["count"] == 2)
    # when the author raises it to 5 with the ETag they read, and the other buyer deletes theirs
    etag = author.get(f"{reviews}/me").headers["ETag"]
    edited = author.put(f"{reviews}/me", json={"rating": 5, "title": "Replaced for free"}, headers={"If-Match": etag})
    deleted = other.delete(f"{reviews}/me")
    refused = customer.post(reviews, json={"rating": 1, "title": "Never bought it"})
    # then
    assert (edited.status_code, deleted.status_code) == (200, 204)
    assert refused.status_code == 403
    assert refused.json()["type"] == "https://shopfeed.dev/problems/purchase-required"
    shown = eventually(lambda: rating(customer, product), lambda r: r == {"count": 1, "average": 5.0})
    assert shown == {"count": 1, "average": 5.0}
