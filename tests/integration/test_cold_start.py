"""Priming at init (shopfeed.platform.warmup): a container's first request makes no call a warm one
would not, and environments restored from one SnapStart snapshot share no randomness."""

import json
import os
import random
import subprocess
import sys

import boto3
import pytest
import snapshot_restore_py  # type: ignore[import-untyped]
import ulid

from local.harness.client import ApiClient
from local.harness.factories import create_product
from shopfeed.commerce import bootstrap
from shopfeed.platform import warmup
from tests.conftest import reset_caches
from tests.integration.conftest import Calls


@pytest.fixture
def deployed_container(commerce_api: ApiClient, monkeypatch: pytest.MonkeyPatch) -> str:
    """A container configured as deployed: the cursor secret is named by ARN, not given. Returns it."""
    arn = boto3.client("secretsmanager").create_secret(Name="CursorSecret", SecretString="s" * 48)["ARN"]
    monkeypatch.delenv("CURSOR_SECRET")
    monkeypatch.setenv("CURSOR_SECRET_ARN", arn)
    reset_caches()  # nothing this process built so far survives into the new container
    return str(arn)


def test_first_product_read_of_a_primed_container_makes_what_a_warm_read_makes_and_nothing_else(
    admin: ApiClient, deployed_container: str, aws_calls: Calls
) -> None:
    # given a product, and a new container configured as deployed
    from functions.commerce_api import app

    create_product(admin, "P-COLD")
    reset_caches()
    aws_calls.clear()

    # when the container initialises
    warmup.prime_now(bootstrap.repository, resolver=app.app)

    # then init fetched the secret, and sent no request to the table
    assert aws_calls == [("secretsmanager", "GetSecretValue")]

    # when its first request reads the product
    aws_calls.clear()
    answer = ApiClient(app.lambda_handler).as_user("U100").get("/products/P-COLD")

    # then it costs exactly what a warm read does: the product and its stock layout, then its buckets
    warm_read = [("dynamodb", "BatchGetItem"), ("dynamodb", "BatchGetItem")]
    assert answer.status == 200
    assert aws_calls == warm_read
    aws_calls.clear()
    ApiClient(app.lambda_handler).as_user("U100").get("/products/P-COLD")
    assert aws_calls == warm_read


def test_without_priming_the_first_read_also_fetches_the_secret(
    admin: ApiClient, deployed_container: str, aws_calls: Calls
) -> None:
    # given a product and a new container that was not primed (what priming saves)
    from functions.commerce_api import app

    create_product(admin, "P-COLD")
    reset_caches()
    aws_calls.clear()

    # when its first request reads the product
    answer = ApiClient(app.lambda_handler).as_user("U100").get("/products/P-COLD")

    # then the request pays a Secrets Manager round trip on top of its read
    assert answer.status == 200
    assert aws_calls == [
        ("secretsmanager", "GetSecretValue"),
        ("dynamodb", "BatchGetItem"),
        ("dynamodb", "BatchGetItem"),
    ]


def test_priming_answers_every_route_without_reading_or_writing(deployed_container: str, aws_calls: Calls) -> None:
    # given the API's resolver, with its composition root already built
    from functions.commerce_api import app

    bootstrap.repository()
    aws_calls.clear()

    # when every route is primed with an anonymous request
    primed = warmup.resolve_every_route(app.app)

    # then each one was resolved and none reached the table
    assert primed == len(app.app._static_routes) + len(app.app._dynamic_routes) > 10
    assert aws_calls == []


def test_priming_does_nothing_outside_lambda(
    deployed_container: str, aws_calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a process that is not a Lambda execution environment (a test, a tool importing the app)
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)

    # when an app module asks to be primed
    warmup.prime(bootstrap.repository)

    # then nothing is built and nothing is called
    assert aws_calls == []


def test_priming_is_left_to_lambda_under_sam_local(
    deployed_container: str, aws_calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given sam local's emulator, which counts init inside the first invoke's timeout
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "CommerceApiFunction")
    monkeypatch.setenv("AWS_SAM_LOCAL", "true")

    # when an app module asks to be primed, then nothing is built
    warmup.prime(bootstrap.repository)
    assert aws_calls == []


def test_priming_runs_in_a_lambda_execution_environment(
    deployed_container: str, aws_calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "CommerceApiFunction")
    monkeypatch.delenv("AWS_SAM_LOCAL", raising=False)
    warmup.prime(bootstrap.repository)
    assert aws_calls == [("secretsmanager", "GetSecretValue")]


def test_each_environment_restored_from_a_snapshot_draws_its_own_randomness() -> None:
    # given the state a snapshot froze: the random generator and the ULID generator of init
    random.seed(1234)
    frozen_random = random.getstate()
    frozen_ulids = ulid.default_generator

    # when the runtime runs the after-restore hooks it was given
    hooks = [hook for hook, *_ in snapshot_restore_py._after_restore_registry]
    assert warmup.refresh_after_restore in hooks
    warmup.refresh_after_restore()

    # then retry jitter and id randomness no longer follow the snapshot's sequence
    assert random.getstate() != frozen_random
    assert ulid.default_generator is not frozen_ulids


# -- what the import defers, priming loads (decision 214) ------------------------------------------

# One request per route group of each API, from the sample events sam local invoke sends.
_GROUP_EVENTS = {
    "commerce_api": [
        "get_product",
        "list_product_reviews",
        "get_user",
        "list_my_orders",
        "place_order",
        "pay_order",
        "list_pending_payments",
    ],
    "feed_api": ["get_feed", "create_post", "list_user_posts", "like_post", "list_post_likes", "unread_notifications"],
}

_PRIMED_THEN_SERVED = """
import json, os, sys
sys.path[:0] = {paths!r}
from moto import mock_aws
with mock_aws():
    import boto3
    from local.harness.tables import create_tables
    create_tables(boto3.client("dynamodb"))
    import app  # AWS_LAMBDA_FUNCTION_NAME is set: init primes, as in Lambda
    def ours():
        return {{m for m in sys.modules if m.startswith("shopfeed.") or m == "ulid"}}
    imported, primed = set({unprimed!r}), ours()
    from pydantic._internal._mock_val_ser import MockValSer
    routes = [*app.app._static_routes, *app.app._dynamic_routes]
    answers = [r.dependant.return_param for r in routes if r.dependant.return_param is not None]
    unbuilt = [f for f in answers if isinstance(f._type_adapter.validator, MockValSer)]
    from local.harness.client import LambdaContext
    statuses = []
    for name in {events!r}:
        with open(f"events/api/{{name}}.json") as sample:
            statuses.append(app.lambda_handler(json.load(sample), LambdaContext())["statusCode"])
    print(json.dumps(dict(deferred=sorted(primed - imported), after=sorted(ours() - primed), statuses=statuses,
                          answers=len(answers), unbuilt=len(unbuilt))))
"""


@pytest.mark.parametrize("function", sorted(_GROUP_EVENTS))
def test_what_the_import_leaves_out_init_loads_so_no_request_imports_anything(function: str) -> None:
    # given the modules the API's import loads (unprimed, as the import-graph test and the bench see it)
    from local.cfn import ROOT
    from tests.conftest import TEST_ENVIRONMENT
    from tests.unit.test_import_graph import loaded_modules

    paths = [ROOT / "functions" / function, ROOT / "shared", ROOT]
    imported = sorted(m for m in loaded_modules("import app", *paths[:2]) if m.startswith("shopfeed.") or m == "ulid")
    # when a fresh container initialises as in Lambda (primed), then serves one request per route group
    code = _PRIMED_THEN_SERVED.format(paths=[str(p) for p in paths], unprimed=imported, events=_GROUP_EVENTS[function])
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
    environment |= TEST_ENVIRONMENT | {"AWS_LAMBDA_FUNCTION_NAME": function}
    done = subprocess.run([sys.executable, "-c", code], env=environment, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # then init loaded what the import left out (the repositories, python-ulid) ...
    assert any(m.endswith(".repository") for m in result["deferred"]), result["deferred"]
    assert "ulid" in result["deferred"]
    # ... and the validator of every route's answer, which no refused priming request reaches (decision 216)
    assert result["answers"] > 10
    assert result["unbuilt"] == 0
    # ... and the requests (each answered, none a server error) loaded nothing more of ours
    assert all(status < 500 for status in result["statuses"]), result["statuses"]
    assert result["after"] == []
