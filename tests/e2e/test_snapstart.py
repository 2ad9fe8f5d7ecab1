"""The local stack run as prod runs (``--parameter SnapStart=true``): each function's init runs once, in
its snapshot, and every worker is restored from it (local/worker.py), as Lambda SnapStart restores
environments of a published version. The seed goes through the API, the stream consumers, the fanout
worker and the payment worker, so every one of them served from restored workers here."""

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Client, LocalStack, running_stack
from tests.e2e.test_feed_fanout import eventually

# A group of its own: its stack starts and runs on one worker while the other e2e tests use theirs.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("snapstart")]


@pytest.fixture(scope="module")
def snap_start_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with running_stack(tmp_path_factory.mktemp("snapstart-stack"), "--parameter", "SnapStart=true") as stack:
        yield stack


def test_every_function_runs_init_once_and_serves_from_workers_restored_from_its_snapshot(
    snap_start_stack: LocalStack,
) -> None:
    # given the seeded stack's page
    page = snap_start_stack.page()
    loaded = {name: stats for name, stats in page["functions"].items() if stats["loaded"]}

    # then every function has a snapshot, whose init was its only one, and its workers were restored
    assert loaded
    assert {f"{name} snapshot" for name in loaded} <= page["processes"].keys()
    assert {name: stats["cold_starts"] for name, stats in loaded.items()} == dict.fromkeys(loaded, 1)
    assert all(stats["restores"] >= 1 for stats in loaded.values())
    # and the stack said so when it was ready
    assert f"SnapStart    {len(loaded)} functions: init ran once" in snap_start_stack.log.read_text()


def test_the_seeded_orders_posts_and_feeds_read_back_through_restored_workers(snap_start_stack: LocalStack) -> None:
    # given the demo user (whose seeded orders went through the payment worker and the commerce stream)
    demo = Client(snap_start_stack, snap_start_stack.token("U100"))

    # when its orders, a product and a follower's home feed are read
    statuses = {o["status"] for o in demo.get("/users/me/orders", params={"limit": 100}).json()["items"]}
    shirt = demo.get("/products/P-RED-TSHIRT")
    follower = Client(snap_start_stack, snap_start_stack.token("U400"))
    home = eventually(lambda: follower.get("/feed").json()["items"], bool)

    # then the API, its consumers and the fanout answered as on-demand workers do
    assert {"Paid", "Shipped"} <= statuses
    assert shirt.status_code == 200
    assert any(item["author_id"] == "U100" for item in home)
