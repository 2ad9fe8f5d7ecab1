"""A primed container's first request, per API route group: the AWS calls a warm request makes and
nothing else (no secret fetch, no client made on the request path; decision 181).

Each case is a new container configured as deployed (the cursor secret named by ARN), primed as its
``functions/*/app.py`` primes it in Lambda, then sent one request of its route group, then the same
request again, warm. Calls, not time: the counts hold on any machine.
"""

from collections.abc import Callable
from dataclasses import dataclass

import boto3
import pytest
import snapshot_restore_py  # type: ignore[import-untyped]
from botocore.exceptions import EndpointConnectionError

from local.harness.client import ApiClient
from local.harness.factories import create_product, register_user
from local.harness.feed_factories import write_post
from shopfeed.accounts import bootstrap as accounts
from shopfeed.commerce import bootstrap as commerce
from shopfeed.feed import bootstrap as feed
from shopfeed.platform import clients, warmup
from tests.conftest import reset_caches
from tests.integration.conftest import Calls


@dataclass(frozen=True)
class Group:
    """One route group: the function serving it, the request its first caller sends, what it calls."""

    name: str
    function: str
    path: str  # ``{post_id}``: the post the fixture wrote
    calls: tuple[tuple[str, str], ...]
    query: tuple[tuple[str, str], ...] = ()


GET_ITEM = ("dynamodb", "GetItem")
QUERY = ("dynamodb", "Query")
GROUPS = [
    # The product with its stock layout, then every stock bucket (decision 157): two BatchGetItems.
    Group("products", "commerce_api", "/products/P-COLD", (("dynamodb", "BatchGetItem"),) * 2),
    Group("orders", "commerce_api", "/users/me/orders", (QUERY,)),
    # One Query per write shard of the pending-payments index.
    Group("payments", "commerce_api", "/payments", (QUERY,) * 4, (("status", "Pending"),)),
    Group("reviews", "commerce_api", "/products/P-COLD/reviews", (QUERY,)),
    # Both halves of a user (customer and social profile) in one BatchGetItem.
    Group("users", "commerce_api", "/users/U100", (("dynamodb", "BatchGetItem"),)),
    # The inbox, and the pull-author registry, which a container keeps PULL_AUTHORS_CACHE_SECONDS: the one
    # read a warm request skips. Priming it would be a DynamoDB read at init (decision 17 keeps init free
    # of them) and a list a SnapStart snapshot would restore stale.
    Group("feed", "feed_api", "/feed", (QUERY,)),
    Group("posts", "feed_api", "/users/U100/posts", (QUERY,)),
    Group("likes", "feed_api", "/posts/{post_id}/likes", (GET_ITEM, QUERY)),
    Group("notifications", "feed_api", "/notifications", (QUERY,)),
]


def _container(function: str) -> tuple[ApiClient, Callable[[], None]]:
    """The function's handler and its priming, as its app.py primes it in Lambda."""
    if function == "commerce_api":
        from functions.commerce_api import app as commerce_app

        return ApiClient(commerce_app.lambda_handler), lambda: warmup.prime_now(
            *commerce.API_PORTS, accounts.accounts, resolver=commerce_app.app
        )
    from functions.feed_api import app as feed_app

    return ApiClient(feed_app.lambda_handler), lambda: warmup.prime_now(
        *feed.API_PORTS, *feed.API_READS, resolver=feed_app.app
    )


@pytest.fixture
def deployed(aws: None, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Data every group reads, then the cursor secret named by ARN, as deployed. Returns the post's id."""
    from functions.commerce_api.app import lambda_handler
    from functions.feed_api.app import lambda_handler as feed_handler

    api = ApiClient(lambda_handler)
    create_product(api.as_user("U-ADMIN", "admin"), "P-COLD")
    register_user(api.as_user("U100"))
    post = write_post(ApiClient(feed_handler))
    arn = boto3.client("secretsmanager").create_secret(Name="CursorSecret", SecretString="s" * 48)["ARN"]
    monkeypatch.delenv("CURSOR_SECRET")
    monkeypatch.setenv("CURSOR_SECRET_ARN", arn)
    monkeypatch.setenv("PULL_AUTHORS_CACHE_SECONDS", "30")  # the template's default (the tests' is 0)
    return {"post_id": post["post_id"]}


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: g.name)
def test_a_primed_containers_first_request_calls_what_a_warm_one_does(
    group: Group, deployed: dict[str, str], aws_calls: Calls
) -> None:
    # given a new container of the group's function, primed at init
    reset_caches()
    client, prime = _container(group.function)
    prime()
    aws_calls.clear()

    # when its first request comes
    caller, path, query = client.as_user("U100", "ops"), group.path.format(**deployed), dict(group.query)
    first = caller.get(path, query=query)
    first_calls = list(aws_calls)
    aws_calls.clear()
    warm = caller.get(path, query=query)

    # then it answers, with the pattern's calls and nothing else, as the warm request does
    assert first.status < 500, first.text
    assert warm.status == first.status
    assert first_calls == list(group.calls)
    assert aws_calls == first_calls


class RegistryUnreachable(EndpointConnectionError):
    """What botocore raises when DynamoDB cannot be reached, after its retries."""


def _unreachable(**_: object) -> None:
    raise RegistryUnreachable(endpoint_url="https://dynamodb.us-east-1.amazonaws.com")


def test_a_registry_read_that_fails_at_init_is_logged_and_left_to_the_first_request(
    deployed: dict[str, str], aws_calls: Calls, caplog: pytest.LogCaptureFixture
) -> None:
    # given a new feed container whose init cannot reach DynamoDB for the registry
    reset_caches()
    client, prime = _container("feed_api")
    events = clients.dynamodb().meta.events  # the container's client, which init reads with
    events.register("before-call.dynamodb.Query", _unreachable)
    try:
        prime()  # then init completes
    finally:
        events.unregister("before-call.dynamodb.Query", _unreachable)
    assert "pull-author registry not primed" in caplog.messages
    aws_calls.clear()

    # when its first request comes, DynamoDB reachable again
    caller = client.as_user("U100", "ops")
    first = caller.get("/feed")

    # then the first request reads the registry itself (a second Query), as an unprimed container's does
    assert first.status == 200, first.text
    assert aws_calls == [QUERY, QUERY]


def test_an_environment_restored_from_a_snapshot_reads_the_registry_again(
    deployed: dict[str, str], aws_calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a primed feed container whose app registered its reads to run after a restore, as in Lambda
    reset_caches()
    client, prime = _container("feed_api")
    prime()
    registered = len(snapshot_restore_py.get_after_restore())
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "FeedApiFunction")
    monkeypatch.delenv("AWS_SAM_LOCAL", raising=False)
    warmup.after_restore(*feed.API_READS)
    aws_calls.clear()

    # when the runtime restores an environment from the snapshot
    for hook, args, kwargs in snapshot_restore_py.get_after_restore()[registered:]:
        hook(*args, **kwargs)

    # then the registry the snapshot froze is read again, and the first request still calls what a warm one does
    assert aws_calls == [QUERY]
    aws_calls.clear()
    assert client.as_user("U100", "ops").get("/feed").status == 200
    assert aws_calls == [QUERY]


def test_outside_lambda_nothing_is_registered_to_run_after_a_restore(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    registered = len(snapshot_restore_py.get_after_restore())
    warmup.after_restore(*feed.API_READS)
    assert len(snapshot_restore_py.get_after_restore()) == registered
