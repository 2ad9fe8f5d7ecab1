"""``--faults``: the stack's functions meet AWS failures in their own calls, the stack page counts
them, the stack sums them up at exit, and the service absorbs them: a success, or a 503 to retry.
The faulted stack (conftest.py) is the soak's too (test_soak.py): one xdist group, one stack."""

import time
import uuid

import pytest
import requests

from tests.e2e.conftest import FAULT_RATE, FAULT_SEED, Client, LocalStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("faults")]


def sent_until_answered(client: Client, method: str, path: str, **options: object) -> requests.Response:
    """A request as a client sends it: again after each 503, when its Retry-After says."""
    for _ in range(10):
        answer = client.request(method, path, **options)
        if answer.status_code != 503:
            return answer
        time.sleep(min(float(answer.headers["Retry-After"]), 2))
    raise AssertionError(f"{method} {path}: still 503")


def test_the_functions_meet_the_faults_and_the_stack_page_counts_them(faulted_stack: LocalStack) -> None:
    # given a stack seeded through its API, its functions faulted (it is ready: the seed went in)
    page = faulted_stack.page()

    # then the page names the settings and counts calls and faults by operation and kind
    faults = page["faults"]
    assert (faults["rate"], faults["seed"]) == (FAULT_RATE, FAULT_SEED)
    assert 0 < faults["faults"] < faults["calls"]
    assert faults["by_operation"]["dynamodb.TransactWriteItems"]["calls"] > 0
    # each function's own counts, the API's and the consumers' alike, add up to the totals
    functions = page["functions"]
    per_function = [row for f in functions.values() for row in (f.get("faults") or {}).values()]
    assert sum(row["calls"] for row in per_function) == faults["calls"]
    assert functions["CommerceApiFunction"]["faults"]
    assert functions["CommerceStreamFunction"]["faults"]


def test_under_faults_orders_are_answered_and_placed_once(faulted_stack: LocalStack) -> None:
    # given a customer and a product, made through the faulted API
    user = f"U-FAULTS-{uuid.uuid4().hex[:8]}"
    customer = Client(faulted_stack, faulted_stack.token(user))
    registered = sent_until_answered(
        customer, "POST", "/users", json={"email": f"{user.lower()}@example.com", "name": "Faulted"}
    )
    assert registered.status_code == 201, registered.text

    # when ten orders are placed, each sent again after a 503 with its Idempotency-Key
    line = {"product_id": "P-RED-TSHIRT", "quantity": 1, "unit_price": {"amount": 1999, "currency": "EUR"}}
    answers = [
        sent_until_answered(
            customer, "POST", "/orders", json={"lines": [line]}, headers={"Idempotency-Key": f"{user}-{n}"}
        )
        for n in range(10)
    ]

    # then every one was placed, once
    assert [a.status_code for a in answers] == [201] * 10, [a.text for a in answers if a.status_code != 201]
    listed = sent_until_answered(customer, "GET", "/users/me/orders").json()["items"]
    assert sorted(o["order_id"] for o in listed) == sorted(a.json()["order_id"] for a in answers)
