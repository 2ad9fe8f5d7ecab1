"""``make load`` against the e2e stack: a few seconds of the mix reach every route, none errs, an order
the stock cannot serve is reported as a refusal of its own, not as an error, and without named products
the admin makes the load products through the API."""

import uuid
from pathlib import Path
from typing import Any

import pytest

from bench.load import mix
from bench.load.__main__ import PRODUCTS, main
from bench.load.report import Report
from tests.e2e.conftest import Client, LocalStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

USERS, SECONDS = 3, 4


def test_a_short_load_reaches_every_route_without_an_error_and_reports_refusals_apart(
    local_stack: LocalStack, admin: Client, product: dict[str, Any], tmp_path: Path
) -> None:
    # given a product in stock and one sold out, named to the load
    fields = {key: product[key] for key in ("name", "category", "price")}
    sold_out = fields | {"product_id": f"P-E2E-SOLD-{uuid.uuid4().hex[:8].upper()}", "available": 0}
    assert admin.post("/products", json=sold_out).status_code == 201
    # when a few users run the mix for a few seconds, ordering both
    code = main(
        [*_arguments(local_stack, tmp_path), "--product", product["product_id"], "--product", sold_out["product_id"]]
    )
    # then every route of the mix answered, none with an error
    report = Report.read(tmp_path / "load")
    assert report.missing() == [], report.markdown()
    assert report.errors == 0, report.markdown()
    assert all(line.errors == 0 for line in report.routes.values())
    assert code == 0
    # and each user's order of the sold-out product is a refusal line, not an error
    refusals = {line.name: line.requests for line in report.refusals}
    assert list(refusals) == [mix.refusal_name(mix.PLACE_ORDER, 409, "Insufficient stock")], report.markdown()
    assert next(iter(refusals.values())) >= USERS


def test_a_load_without_named_products_has_the_admin_make_them_and_runs_without_an_error(
    local_stack: LocalStack, customer: Client, tmp_path: Path
) -> None:
    # when the load runs as `make load` does, with a token minted for each user and one for the admin
    code = main(_arguments(local_stack, tmp_path))
    # then the admin made the load products through the API, and every route answered without an error
    for made, _ in PRODUCTS:
        assert customer.get(f"/products/{made['product_id']}").status_code == 200
    report = Report.read(tmp_path / "load")
    assert (report.missing(), report.errors, code) == ([], 0, 0), report.markdown()


def _arguments(stack: LocalStack, out: Path) -> list[str]:
    arguments = ["--url", stack.url, "--state-dir", str(stack.state_dir), "--out", str(out)]
    return [*arguments, "--users", str(USERS), "--seconds", str(SECONDS)]
