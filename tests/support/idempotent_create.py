"""The Idempotency-Key contract every create endpoint keeps, as one parametrised check.

A context lists its creates as ``IdempotentCreate`` cases and runs ``check_idempotent_create`` on each
(tests/integration/test_idempotent_creates.py does it for commerce): first answer 201, a retry with
the same key and body answers the same 201 body marked ``Idempotent-Replayed`` and changes nothing, the
key with another body is 422, no key is 400, and keys are per user.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from local.harness.client import ApiClient

Effect = Callable[[ApiClient], object]
"""Something observable the create changes (a count, a stock level): compared before and after."""


@dataclass(frozen=True)
class IdempotentCreate:
    name: str
    path: str
    body: dict[str, Any]
    other_body: dict[str, Any]
    effect: Effect
    prepare: Callable[[ApiClient], None] = lambda _: None


def check_idempotent_create(case: IdempotentCreate, client: ApiClient, other_user: ApiClient) -> None:
    case.prepare(client)
    before = case.effect(client)

    missing = client.post(case.path, case.body)
    assert missing.status == 400, missing.text
    assert missing.json["type"].endswith("/idempotency-key-missing")
    assert case.effect(client) == before, "a create without a key changed something"

    key = {"Idempotency-Key": f"contract-{case.name}"}
    first = client.post(case.path, case.body, headers=key)
    assert first.status == 201, first.text
    assert "Idempotent-Replayed" not in first.headers
    after_first = case.effect(client)
    assert after_first != before, "the create changed nothing observable"

    retried = client.post(case.path, case.body, headers=key)
    assert retried.status == 201, retried.text
    assert retried.headers.get("Idempotent-Replayed") == "true"
    assert retried.json == first.json
    assert retried.headers.get("Location") == first.headers.get("Location")
    assert case.effect(client) == after_first, "a replay changed something"

    reused = client.post(case.path, case.other_body, headers=key)
    assert reused.status == 422, reused.text
    assert reused.json["type"].endswith("/idempotency-key-reused")
    assert case.effect(client) == after_first

    theirs = other_user.post(case.path, case.body, headers=key)
    assert theirs.status in (201, 403), theirs.text  # 403: the create is not theirs to make at all
    assert "Idempotent-Replayed" not in theirs.headers
