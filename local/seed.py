"""Demo data, made through the API like any client would (so it also proves the API works).

The playbook's sample values: customer U100, and two products an admin creates. Safe to repeat:
against a persistent engine a second run gets 409 already-exists, which counts as done.
"""

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("local.seed")

DEMO_USER = "U100"
ADMIN_USER = "U-ADMIN"
OPS_USER = "U-OPS"

CUSTOMER = {"email": "u100@example.com", "name": "Demo Customer"}
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


class SeedFailed(RuntimeError):
    pass


def seed(base_url: str, user_token: str, admin_token: str) -> list[str]:
    """Register U100 and create the demo products; returns one word per step (created / already there)."""
    steps = [Step(f"user {DEMO_USER}", "POST", "/users", CUSTOMER, user_token)]
    steps += [Step(f"product {p['product_id']}", "POST", "/products", p, admin_token) for p in PRODUCTS]
    outcomes = []
    for step in steps:
        status = _send(base_url, step)
        if status == 409:
            outcomes.append(f"{step.what} already there")
        elif 200 <= status < 300:
            outcomes.append(f"{step.what} created")
        else:
            raise SeedFailed(f"seeding {step.what}: {step.method} {step.path} answered {status}")
    return outcomes


def _send(base_url: str, step: Step) -> int:
    request = urllib.request.Request(
        base_url + step.path,
        data=json.dumps(step.body).encode(),
        method=step.method,
        headers={"content-type": "application/json", "authorization": f"Bearer {step.token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        if error.code != 409:
            log.error("%s %s: %s", step.method, step.path, error.read().decode(errors="replace")[:500])
        return int(error.code)
