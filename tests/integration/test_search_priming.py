"""Priming the search engine's client at init (decisions 240, 268): where search is configured, a
container initialised as in Lambda imports opensearch-py, builds the client and opens its connection
with one search that matches nothing (not for a SnapStart snapshot), and its first search imports
nothing more, connects no more and calls what a warm search calls."""

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from local.cfn import ROOT
from shopfeed.commerce.catalog.search import PRODUCTS
from shopfeed.feed.posts.search import POSTS
from shopfeed.platform.search import SearchMapping, Upsert
from shopfeed.platform.search.opensearch import connect
from tests.conftest import TEST_ENVIRONMENT
from tests.support.search import osmem_engine, osmem_url

__all__ = ["osmem_engine", "osmem_url"]

# Each API, its search index, a document that matches its sample search event, that event, and what a
# search calls: the engine's search (and for posts the BatchGetItem that leaves out deleted ones).
SEARCHES = {
    "commerce_api": (
        PRODUCTS,
        {"product_id": "P-BLUE-SHIRT", "name": "Blue Shirt", "description": "", "category": "shirts"}
        | {"price": {"amount": 1999, "currency": "EUR"}, "updated_at": "2026-11-22T10:00:00Z"},
        "events/api/search_products.json",
        ["search POST /products/_search"],
    ),
    "feed_api": (
        POSTS,
        {"post_id": "01JSEARCHP0ST0000000000000", "author_id": "U100", "text": "DynamoDB streams"}
        | {"tags": ["dynamodb"], "created_at": "2026-11-22T10:00:00Z"},
        "events/api/search_posts.json",
        ["search POST /posts/_search", "dynamodb.BatchGetItem"],
    ),
}

# A fresh interpreter initialised as Lambda initialises the function (AWS_LAMBDA_FUNCTION_NAME is set,
# so ``import app`` primes), on moto. ``{before}`` runs before the import, ``{after}`` after it.
_CONTAINER = """
import json, logging, socket, sys
sys.path[:0] = {paths!r}
from moto import mock_aws
with mock_aws():
    import boto3
    from local.harness.tables import create_tables
    create_tables(boto3.client("dynamodb"))
    calls = []
    boto3.setup_default_session()
    boto3.DEFAULT_SESSION.events.register(
        "after-call.*.*", lambda model, **_: calls.append(model.service_model.service_name + "." + model.name)
    )
    class EngineCalls(logging.Handler):
        # opensearch-py logs each request it sends here: counted without importing it before init.
        def emit(self, line):
            calls.append("search " + line.args[0] + " /" + line.args[1].split("/", 3)[-1].split("?")[0])
    engine_log = logging.getLogger("opensearch")
    engine_log.setLevel(logging.INFO)
    engine_log.propagate = False
    engine_log.addHandler(EngineCalls())
    class NewConnections(logging.Handler):
        # urllib3 logs each connection it opens (moto answers the AWS calls in process: none of them).
        def emit(self, line):
            if line.getMessage().startswith("Starting new"):
                calls.append("connect")
    pool_log = logging.getLogger("urllib3.connectionpool")
    pool_log.setLevel(logging.DEBUG)
    pool_log.propagate = False
    pool_log.addHandler(NewConnections())
    def ours():
        return sorted(m for m in sys.modules if m.startswith(("shopfeed.", "opensearchpy")))
{before}
    import app
    primed, init_calls, calls[:] = ours(), list(calls), []
{after}
"""

_SERVE = """
    from local.harness.client import LambdaContext
    answers, seen = [], []
    for _ in range(2):  # the container's first search, then a warm one
        with open({event!r}) as sample:
            answer = app.lambda_handler(json.load(sample), LambdaContext())
        answers.append((answer["statusCode"], len(json.loads(answer["body"]).get("items", []))))
        seen.append(list(calls))
        calls[:] = []
    print(json.dumps(dict(primed=primed, init_calls=init_calls, after=sorted(set(ours()) - set(primed)),
                          answers=answers, first=seen[0], warm=seen[1])))
"""


def _container(function: str, endpoint: str | None, before: str, after: str) -> dict[str, Any]:
    paths = [str(ROOT / "functions" / function), str(ROOT / "shared"), str(ROOT)]
    code = _CONTAINER.format(paths=paths, before=before, after=after)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
    environment = {k: v for k, v in environment.items() if k != "SEARCH_ENDPOINT"}
    environment |= TEST_ENVIRONMENT | {"AWS_LAMBDA_FUNCTION_NAME": function}
    environment |= {"SEARCH_ENDPOINT": endpoint} if endpoint else {}
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# An engine endpoint that records every connection made to it and answers none (a socket that listens
# and never accepts: the kernel completes each connect into its backlog).
_SILENT_ENGINE = """
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    import os
    os.environ["SEARCH_ENDPOINT"] = "http://127.0.0.1:%d" % listener.getsockname()[1]
{environment}"""
_INIT_SEEN_BY_ENGINE = """
    from shopfeed.{context} import bootstrap
    built = bootstrap.api_search_index.cache_info().currsize
    try:
        listener.accept()
        connected = True
    except BlockingIOError:
        connected = False
    # the same listener sees a connection made after init (so a connection at init would have shown)
    socket.create_connection(listener.getsockname()).close()
    listener.accept()
    print(json.dumps(dict(primed=primed, init_calls=init_calls, built=built, connected=connected,
                          engine=type(bootstrap.api_search_index()).__name__)))
"""


@pytest.mark.parametrize("function", sorted(SEARCHES))
def test_priming_builds_the_search_client_and_an_engine_that_never_answers_does_not_fail_init(function: str) -> None:
    # when a container initialises with an engine that never answers
    context = "commerce" if function == "commerce_api" else "feed"
    result = _container(
        function, None, _SILENT_ENGINE.format(environment=""), _INIT_SEEN_BY_ENGINE.format(context=context)
    )

    # then init imported the client and built the engine's port, behind the API's breaker ...
    assert "opensearchpy" in result["primed"]
    assert "shopfeed.platform.search.opensearch" in result["primed"]
    assert result["built"] == 1
    assert result["engine"] == "Breaker"
    # ... tried its warm-up (the connection reached the engine, the search had no answer) and went on
    assert result["connected"] is True
    assert "connect" in result["init_calls"]


@pytest.mark.parametrize("function", sorted(SEARCHES))
def test_a_snapstart_snapshot_holds_no_connection_to_the_engine(function: str) -> None:
    # when a container initialises for a SnapStart snapshot (a restored environment could not use a
    # connection the snapshot froze)
    snapshot = '    os.environ["AWS_LAMBDA_INITIALIZATION_TYPE"] = "snap-start"\n'
    context = "commerce" if function == "commerce_api" else "feed"
    result = _container(
        function, None, _SILENT_ENGINE.format(environment=snapshot), _INIT_SEEN_BY_ENGINE.format(context=context)
    )

    # then init built the engine's port and neither called the engine nor connected to it
    assert result["built"] == 1
    assert not any(call.startswith("search ") or call == "connect" for call in result["init_calls"])
    assert result["connected"] is False


@pytest.mark.parametrize("function", sorted(SEARCHES))
def test_without_search_configured_priming_leaves_the_client_alone(function: str) -> None:
    # when a container of a stack without search initialises
    result = _container(function, None, "", "    print(json.dumps(dict(primed=primed)))")
    # then nothing of the engine's client was imported (search answers 503 there, decision 39)
    assert not [m for m in result["primed"] if m.startswith(("opensearchpy", "shopfeed.platform.search.opensearch"))]


@pytest.mark.parametrize("function", sorted(SEARCHES))
def test_a_primed_containers_first_search_calls_what_a_warm_one_calls_and_imports_nothing(
    function: str, osmem_url: str
) -> None:
    # given an engine holding a document the API's sample search finds
    spec, body, event, calls = SEARCHES[function]
    _index(osmem_url, spec, body)

    # when a container initialises with it configured, then serves its first search and a warm one
    result = _container(function, osmem_url, "", _SERVE.format(event=event))

    # then init opened the engine's connection, and searched the API's own index on it (twice) ...
    assert [call for call in result["init_calls"] if call == "connect" or call.startswith("search ")] == [
        "connect",
        f"search POST /{spec.alias}/_search",
        f"search POST /{spec.alias}/_search",
    ]
    # ... both requests were answered (the post is in the index only: the route leaves out a hit the
    # table lacks) ...
    assert [status for status, _ in result["answers"]] == [200, 200]
    assert result["answers"][0][1] == (1 if function == "commerce_api" else 0)
    # ... the first search made the calls a warm one makes, no more, on the connection init opened ...
    assert result["first"] == result["warm"] == calls
    # ... and loaded no module init had not: the client was imported at init
    assert "opensearchpy" in result["primed"]
    assert result["after"] == []


def _index(endpoint: str, spec: SearchMapping, body: dict[str, Any]) -> None:
    engine = connect(endpoint, timeout=60)
    engine.write(spec, [Upsert(str(body[spec.key_field]), 1, body)])
    engine.refresh(spec)
