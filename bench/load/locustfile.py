"""The users of ``make load``, for Locust: run by ``python -m bench.load``, which writes the plan they read.

Each simulated user takes one identity of the plan (users share identities when there are fewer, as with
one deployed token), registers and walks through the walkthrough once (browse, search, order each product
with an Idempotency-Key, pay, post, follow, like, read the home feed and notifications), so even a short
run reaches every route; then it does the same actions at random, weighted as ``bench/load/mix.py`` says.
Requests are named by route template; ``mix.judge`` decides each answer: an expected refusal is
reported on a line of its own and is no failure, anything else that is not 2xx is a failure.
"""

import csv
import functools
import itertools
import json
import os
import random
import uuid
from collections import deque
from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path
from typing import Any

from locust import HttpUser, between, events, task
from locust.env import Environment
from locust.stats import PERCENTILES_TO_REPORT, StatsCSV

from bench.load import mix

# What the users of this process saw: posts to like, and users to follow (registered ones only: following
# an identity of the plan before it registered is a 404, the load's error, not the API's).
_seen_posts: deque[str] = deque(maxlen=500)
_seen_users: deque[str] = deque(maxlen=200)


@functools.cache
def _plan() -> dict[str, Any]:
    plan: dict[str, Any] = json.loads(Path(os.environ["LOAD_PLAN"]).read_text())
    return plan


@functools.cache
def _identities() -> Iterator[dict[str, str]]:
    return itertools.cycle(_plan()["identities"])


@events.test_stop.add_listener
def _write_statistics(environment: Environment, **_: Any) -> None:
    """Locust's own per-name statistics and failures as CSV, in its format, to ``$LOAD_REPORT``_stats.csv
    and _failures.csv. Written here, once every user has stopped, rather than by ``--csv``: that writer
    runs each second and misses the answers that came while users were finishing (``--stop-timeout``)."""
    statistics = StatsCSV(environment, PERCENTILES_TO_REPORT)
    prefix = os.environ["LOAD_REPORT"]
    with Path(f"{prefix}_stats.csv").open("w", newline="") as requests:
        statistics.requests_csv(csv.writer(requests))
    with Path(f"{prefix}_failures.csv").open("w", newline="") as failures:
        statistics.failures_csv(csv.writer(failures))


class Shopper(HttpUser):
    """One customer of the shop and the feed."""

    wait_time = between(0.5, 1.5)

    def on_start(self) -> None:
        self.identity = next(_identities())
        self.user_id = self.identity["user_id"]
        self.client.headers["Authorization"] = f"Bearer {self.identity['token']}"
        self.products: list[dict[str, Any]] = _plan()["products"]
        self.unpaid: deque[dict[str, Any]] = deque(maxlen=50)
        body = {"name": f"Load {self.user_id}"} | ({"email": email} if (email := self.identity.get("email")) else {})
        self.call(mix.REGISTER, json=body)
        if mix.judge(mix.REGISTER, self.status) == mix.OK or self.status == HTTPStatus.CONFLICT:  # now or before
            _seen_users.append(self.user_id)
        self.browse_category()
        self.view_product()
        self.search_products()
        for product in self.products:
            self.place_order(product)
        self.pay_order()
        self.create_post()
        self.follow()
        self.like()
        self.read_home_feed()
        self.read_notifications()

    def call(self, route: str, *, key: str | None = None, parameters: Any = None, **options: Any) -> Any:
        """Send ``route`` filled with ``parameters``, report it by its template, return the JSON answer
        of a 2xx (None otherwise); ``self.status`` keeps the status."""
        headers = {"Idempotency-Key": key} if key else {}
        path = mix.path(route, **(parameters or {}))
        with self.client.request(
            mix.method(route), path, name=route, headers=headers, catch_response=True, **options
        ) as answer:
            self.status = answer.status_code
            verdict = mix.judge(route, answer.status_code)
            if verdict == mix.OK:
                answer.success()
                return answer.json() if answer.content else {}
            if verdict == mix.REFUSED:
                # Locust reports what request_meta says when the block ends: a refusal gets a line of
                # its own (route, status, problem title) so it is seen apart and not as a failure.
                answer.request_meta["name"] = mix.refusal_name(route, answer.status_code, _title(answer))
                answer.success()
            else:
                answer.failure(f"{answer.status_code} {_title(answer)}".strip())
        return None

    @task(mix.WEIGHTS[mix.LIST_PRODUCTS])
    def browse_category(self) -> None:
        self.call(mix.LIST_PRODUCTS, params={"category": random.choice(self.products)["category"]})

    @task(mix.WEIGHTS[mix.GET_PRODUCT])
    def view_product(self) -> None:
        self.call(mix.GET_PRODUCT, parameters={"product_id": random.choice(self.products)["product_id"]})

    @task(mix.WEIGHTS[mix.SEARCH_PRODUCTS])
    def search_products(self) -> None:
        self.call(mix.SEARCH_PRODUCTS, params={"q": random.choice(self.products)["name"].split()[0]})

    @task(mix.WEIGHTS[mix.PLACE_ORDER])
    def place_order(self, product: dict[str, Any] | None = None) -> None:
        product = product or random.choices(self.products, [p["weight"] for p in self.products])[0]
        line = {"product_id": product["product_id"], "quantity": 1, "unit_price": product["price"]}
        order = self.call(mix.PLACE_ORDER, key=str(uuid.uuid4()), json={"lines": [line]})
        if order is not None:
            self.unpaid.append(order)

    @task(mix.WEIGHTS[mix.PAY_ORDER])
    def pay_order(self) -> None:
        if not self.unpaid:
            return
        order = self.unpaid.popleft()
        payment = {"amount": order["total"], "payment_method": "tok_sandbox_visa"}
        self.call(mix.PAY_ORDER, key=str(uuid.uuid4()), parameters={"order_id": order["order_id"]}, json=payment)

    @task(mix.WEIGHTS[mix.CREATE_POST])
    def create_post(self) -> None:
        body = {"text": f"Load run {_plan()['run']}: a post by {self.user_id}.", "tags": ["load"]}
        if (post := self.call(mix.CREATE_POST, key=str(uuid.uuid4()), json=body)) is not None:
            _seen_posts.append(post["post_id"])

    @task(mix.WEIGHTS[mix.FOLLOW])
    def follow(self) -> None:
        if others := [user for user in _seen_users if user != self.user_id]:
            self.call(mix.FOLLOW, parameters={"user_id": random.choice(others)})

    @task(mix.WEIGHTS[mix.LIKE])
    def like(self) -> None:
        if _seen_posts:
            self.call(mix.LIKE, parameters={"post_id": random.choice(_seen_posts)})

    @task(mix.WEIGHTS[mix.HOME_FEED])
    def read_home_feed(self) -> None:
        if (page := self.call(mix.HOME_FEED)) is not None:
            for post in page["items"]:
                _seen_posts.append(post["post_id"])
                _seen_users.append(post["author_id"])

    @task(mix.WEIGHTS[mix.NOTIFICATIONS])
    def read_notifications(self) -> None:
        self.call(mix.NOTIFICATIONS, params={"unread": "true"})


def _title(answer: Any) -> str:
    """The problem+json title of an answer, or nothing when it has none (a gateway's own error page)."""
    try:
        body = answer.json()
    except ValueError:
        return ""
    return str(body.get("title", "")) if isinstance(body, dict) else ""
