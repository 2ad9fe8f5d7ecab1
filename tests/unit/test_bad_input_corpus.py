"""A corpus of bad input for every route with a body, each answer read back: never a 5xx, never a write.

The corpus crosses each route's well-formed body with what a client can get wrong: media types,
undecodable bytes, JSON of the wrong kind, and every field replaced by a value of the wrong type or out
of bounds. Every route runs in its own function on ports that log any call (tests/unit/edge.py): bad
input is refused before storage, so the log stays empty.
"""

import base64
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from local import cfn
from local.harness.client import Answer, ApiClient
from tests.support.http_edge import ROUTES, route_id
from tests.unit.edge import Edge

BODY_ROUTES = [route for route in ROUTES if route[2] is not None]

# (content type, raw body, base64-encoded): whatever the route, none of these is a readable JSON object.
UNREADABLE: list[tuple[str, str, bool]] = [
    ("multipart/form-data", "--x\r\n\r\n", False),
    ("multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--', False),
    ("application/x-www-form-urlencoded", "lines=1", False),
    ("text/plain", "{}", False),
    ("application/xml", "<a/>", False),
    ("application/json; charset=latin-1", "{}", False),
    ("application/json", "{", False),
    ("application/json", "[]", False),
    ("application/json", "null", False),
    ("application/json", '"text"', False),
    ("application/json", "1" * 4301, False),
    ("application/json", '{"a": ' + "9" * 5000 + "}", False),
    ("application/json", '{"a": NaN}', False),
    ("application/json", '{"a": Infinity}', False),
    ("application/json", '{"a": 1, "a": 2}', False),
    ("application/json", '{"a": "\\udc00"}', False),
    ("application/json", "[" * 50_000, False),
    ("application/json", base64.b64encode(b'{"a": "\xc3\x28"}').decode(), True),
    ("application/json", "not base64!", True),
    ("application/json", "\ufeff{}", False),
]

# Values of the wrong type or out of bounds, for a field whose good value is an int or a str.
WRONG_FOR_INT: list[Any] = [True, False, "1", 1.5, -1, 10**39, 10**300, [], {}, "x" * 5000]
WRONG_FOR_STR: list[Any] = [True, 1, 1.5, [], {}, "x" * 5000]


@dataclass
class Case:
    label: str
    body: str
    content_type: str = "application/json"
    base64_encoded: bool = False


def _leaves(document: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from _leaves(value, (*path, index))
    else:
        yield path, document


def _replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[path[0]] = _replaced(document[path[0]], path[1:], value)
    return copy


def corpus(good: dict[str, Any]) -> list[Case]:
    cases = [Case(f"{ct} {body[:20]!r}", body, ct, b64) for ct, body, b64 in UNREADABLE]
    cases.append(Case("an unknown member", json.dumps({**good, "unknown": 1})))
    for path, value in _leaves(good):
        wrong = WRONG_FOR_INT if isinstance(value, int) and not isinstance(value, bool) else WRONG_FOR_STR
        for bad in wrong:
            label = f"{'.'.join(map(str, path))}={str(bad)[:12]}"
            cases.append(Case(label, json.dumps(_replaced(good, path, bad))))
    return cases


def _send(client: ApiClient, route: tuple[str, str, Any, dict[str, Any], dict[str, str]], case: Case) -> Answer:
    method, path, _, query, headers = route
    fresh = {k: (str(uuid.uuid4()) if k == "Idempotency-Key" else v) for k, v in headers.items()}
    return client.request(
        method,
        path,
        raw_body=case.body,
        query=query,
        headers={**fresh, "Content-Type": case.content_type},
        base64_encoded=case.base64_encoded,
    )


@pytest.mark.parametrize("route", BODY_ROUTES, ids=route_id)
def test_no_bad_input_gets_a_5xx_or_writes_anything(
    edge: Edge, route: tuple[str, str, Any, dict[str, Any], dict[str, str]]
) -> None:
    # given: the admin may call every route, so refusals are about the input, not the role
    cases = corpus(route[2])
    admin = edge.client_of(cfn.function_for(route[0], route[1]), "U-ADMIN", "admin")
    server_errors, writes, accepted = [], [], []

    # when
    for case in cases:
        calls = len(edge.calls)
        answer = _send(admin, route, case)
        if answer.status >= 500:
            server_errors.append(case.label)
        if len(edge.calls) != calls:
            writes.append(case.label)
        if answer.status < 400:
            accepted.append(case.label)

    # then
    print(f"corpus {route_id(route)}: {len(cases)} requests, {len(server_errors)} 5xx, {len(writes)} writes")
    assert server_errors == []
    assert writes == []
    assert accepted == []
