"""Feed request bodies and seeding through the feed API, shared by the unit, integration and e2e tiers
and the benchmarks.

``client`` is any of the tiers' clients (``ApiClient`` in-process, the e2e ``Client`` over HTTP).
"""

import uuid
from typing import Any

from local.harness.factories import pages


def post_body(text: str = "Single-table design, one access pattern at a time.", *tags: str) -> dict[str, Any]:
    return {"text": text, "tags": list(tags)}


def write_post(client: Any, text: str = "hello", *tags: str, key: str | None = None) -> dict[str, Any]:
    answer = client.post("/posts", post_body(text, *tags), headers={"Idempotency-Key": key or str(uuid.uuid4())})
    assert answer.status == 201, answer.text
    return dict(answer.json)


def follow(client: Any, user_id: str) -> dict[str, Any]:
    answer = client.put(f"/users/{user_id}/followers/me")
    assert answer.status in (200, 201), answer.text
    return dict(answer.json)


def every_item(client: Any, path: str, **query: Any) -> list[dict[str, Any]]:
    """Every item of a list, page by page."""
    return [item for page in pages(client, path, **query) for item in page["items"]]
