"""Product search on the local stack: the seed data and a new product are searchable within seconds."""

import subprocess
import sys
import time
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import Client, LocalStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

SEARCH_TIMEOUT_S = 20


def found(client: Client, query: str, expected: str, timeout_s: float = SEARCH_TIMEOUT_S) -> list[dict[str, Any]]:
    """The first page of ``GET /search/products?<query>`` once it lists ``expected`` (or at the timeout)."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = client.get(f"/search/products?{query}")
        assert answer.status_code == 200, answer.text
        items = answer.json()["items"]
        if any(item["product_id"] == expected for item in items) or time.monotonic() > deadline:
            return list(items)
        time.sleep(0.25)


def test_the_seed_t_shirt_is_found_by_shirt(customer: Client) -> None:
    # when
    items = found(customer, "q=shirt", "P-RED-TSHIRT")
    # then (other tests add shirts of their own: the order among them is the engine's)
    (tshirt,) = [item for item in items if item["product_id"] == "P-RED-TSHIRT"]
    assert (tshirt["name"], tshirt["price"]) == ("Red T-Shirt", {"amount": 1999, "currency": "EUR"})


def test_a_new_product_is_searchable_within_seconds_and_its_edit_follows(admin: Client, customer: Client) -> None:
    # given
    product_id = f"P-E2E-{uuid.uuid4().hex[:8].upper()}"
    word = f"zq{uuid.uuid4().hex[:6]}"
    body = {
        "product_id": product_id,
        "name": f"Linen shirt {word}",
        "description": "Loose fit.",
        "category": "apparel",
        "price": {"amount": 3900, "currency": "EUR"},
        "available": 5,
    }
    assert admin.post("/products", json=body).status_code == 201
    # when / then: found by its word within the category
    assert [item["product_id"] for item in found(customer, f"q={word}&category=apparel", product_id)] == [product_id]
    # and an edit reaches the index too
    renamed = admin.request(
        "PATCH", f"/products/{product_id}", json={"name": f"Flax shirt {word}"}, headers={"If-Match": '"1"'}
    )
    assert renamed.status_code == 200, renamed.text
    deadline = time.monotonic() + SEARCH_TIMEOUT_S
    while found(customer, f"q={word}", product_id)[0]["name"] != f"Flax shirt {word}":
        assert time.monotonic() < deadline, "the edit did not reach the index"
        time.sleep(0.25)


def test_search_without_a_token_is_401_and_without_words_422(anonymous: Client, customer: Client) -> None:
    # when
    no_token = anonymous.get("/search/products?q=shirt")
    no_words = customer.get("/search/products?q=%20")
    # then
    assert no_token.status_code == 401
    assert no_words.status_code == 422


def test_make_reindex_rebuilds_the_index_of_the_running_stack(local_stack: LocalStack, customer: Client) -> None:
    # given: the seed data is indexed
    assert found(customer, "q=shirt", "P-RED-TSHIRT")
    # when: what `make reindex` runs
    done = subprocess.run(
        [sys.executable, "-m", "shopfeed.commerce.catalog.reindex", "--stack", local_stack.url, "--rate", "1000"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # then: a new index behind the alias, and search answers from it
    assert done.returncode == 0, done.stdout + done.stderr
    assert "indexed into products-v1-" in done.stdout
    assert "P-RED-TSHIRT" in [item["product_id"] for item in found(customer, "q=shirt", "P-RED-TSHIRT")]
