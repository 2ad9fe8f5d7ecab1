"""Post search on the local stack: the seeded posts and a new post are searchable within seconds, a
deleted post leaves the results, and `make reindex` rebuilds the posts index from FeedTable."""

import os
import subprocess
import sys
import time
import uuid
from typing import Any

import pytest

from local.harness.feed_builders import profile
from shopfeed.feed import items
from shopfeed.platform import dynamo
from tests.e2e.conftest import Client, LocalStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

SEARCH_TIMEOUT_S = 20


def search(client: Client, query: dict[str, str], until: Any, timeout_s: float = SEARCH_TIMEOUT_S) -> list[dict]:
    """The first page of ``GET /search/posts`` once ``until(items)`` holds (or at the timeout)."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = client.get("/search/posts", params=query)
        assert answer.status_code == 200, answer.text
        found = list(answer.json()["items"])
        if until(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.25)


def post_ids(found: list[dict]) -> list[str]:
    return [item["post_id"] for item in found]


@pytest.fixture
def author(local_stack: LocalStack) -> tuple[str, Client]:
    """A user of this test only, with a social profile (the stack is shared by the session)."""
    suffix = uuid.uuid4().hex[:8]
    user_id = f"searcher-{suffix}"
    table = local_stack.page()["resources"]["FeedTable"]["name"]
    item = items.profile_item(profile(user_id, handle=f"searcher_{suffix}"))
    local_stack.dynamodb().put_item(TableName=table, Item=dynamo.serialize(item))
    return f"searcher_{suffix}", Client(local_stack, local_stack.token(user_id))


def test_the_seeded_sparse_index_post_is_found_with_its_author_handle(customer: Client) -> None:
    # when
    found = search(customer, {"q": "sparse", "tag": "dynamodb"}, lambda hits: hits)
    # then
    seeded = [hit for hit in found if hit["text"] == "A sparse index holds only what you will query."]
    assert [(hit["author_id"], hit["author_handle"]) for hit in seeded] == [("U200", "grace")]


def test_a_new_post_is_found_within_seconds_and_leaves_the_results_when_deleted(
    author: tuple[str, Client], customer: Client
) -> None:
    # given
    handle, client = author
    word = f"zq{uuid.uuid4().hex[:6]}"
    written = client.post(
        "/posts",
        json={"text": f"Search sync keeps {word} in step", "tags": ["search"]},
        headers={"Idempotency-Key": word},
    )
    assert written.status_code == 201, written.text
    post_id = written.json()["post_id"]
    # when / then: found by its word, and by its author's handle
    assert post_ids(search(customer, {"q": word}, lambda hits: hits)) == [post_id]
    assert post_ids(search(customer, {"q": handle}, lambda hits: hits)) == [post_id]
    # and a delete reaches the index too
    assert client.delete(f"/posts/{post_id}").status_code == 204
    assert search(customer, {"q": word}, lambda hits: not hits) == []


def test_post_search_without_a_token_is_401_and_without_words_422(anonymous: Client, customer: Client) -> None:
    # when
    no_token = anonymous.get("/search/posts", params={"q": "index"})
    no_words = customer.get("/search/posts", params={"q": " "})
    # then
    assert no_token.status_code == 401
    assert no_words.status_code == 422
    assert no_words.headers["content-type"] == "application/problem+json"


def test_make_reindex_rebuilds_the_posts_index_of_the_running_stack(local_stack: LocalStack, customer: Client) -> None:
    # given: the seed posts are indexed
    assert search(customer, {"q": "sparse"}, lambda hits: hits)
    # when: what `make reindex INDEX=posts` runs, from a shell without any AWS settings
    shell = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    done = subprocess.run(
        [sys.executable, "-m", "shopfeed.feed.reindex", "--stack", local_stack.url, "--rate", "1000"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=shell,
    )
    # then: a new index behind the alias, and search answers from it
    assert done.returncode == 0, done.stdout + done.stderr
    assert "indexed into posts-v1-" in done.stdout
    found = search(customer, {"q": "sparse"}, lambda hits: hits)
    assert "A sparse index holds only what you will query." in [hit["text"] for hit in found]
