"""What each function's entry point imports: nothing its first request does not run (decisions 176–178, 214, 233).

Every function of template.yaml is imported as Lambda imports it (its CodeUri directory and the layer
first on sys.path, no AWS_LAMBDA_FUNCTION_NAME so nothing is primed) in a fresh interpreter, and the
modules it left in ``sys.modules`` are checked against what its kind may load. Modules, not time: the
test holds on a busy machine, and a new function is checked as soon as the template names it.
"""

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from local import cfn
from tests.unit.test_architecture import COMPOSERS, CONTEXTS, EXPOSED

ROOT = cfn.ROOT
SHARED = ROOT / "shared"
HTTP_EVENTS = frozenset({"HttpApi", "Api"})

# What no HTTP entry point may load: its first request runs none of it.
NOT_IN_HTTP = {
    "aws_lambda_powertools.utilities.batch": "Powertools' batch processing (stream and queue consumers)",
    "aws_lambda_powertools.utilities.parser": "Powertools' parser models (Kafka, Kinesis, SQS ...)",
    # The consumer side of the platform (decision 206): an API writes outbox items and never relays them,
    # and never reads a stream record or a queue message. (Powertools' data classes, the stream and SQS
    # events among them, cannot be refused: the HTTP resolver imports that package itself.)
    "shopfeed.platform.streams": "stream records (stream consumers)",
    "shopfeed.platform.exactly_once": "exactly-once stream handling (stream consumers)",
    "shopfeed.platform.outbox_relay": "the outbox relay and sweeper (an API only writes outbox items)",
    "shopfeed.platform.queues": "task queues (consumers fill them, workers take from them)",
    "shopfeed.platform.search.sync": "the search sync (the stream consumer and its worker)",
    # The storage side (decision 214): the composition roots import it as they build the ports, which
    # priming does at init in Lambda (tests/integration/test_cold_start.py shows no request imports more).
    "shopfeed.commerce.settings": "the commerce functions' settings (read by the composition root)",
    "shopfeed.accounts.settings": "the accounts' settings (read by their composition root, decision 260)",
    "shopfeed.commerce.payments.sandbox": "the sandbox payment provider (the payment worker's)",
}
# Module names ending so, which no HTTP entry point loads at import (decision 214).
NOT_IN_HTTP_BY_NAME = {
    ".repository": "a repository (the composition root builds it: priming at init, or the first request)",
}
# Module names with these segments, which an API's own import loads none of: its route groups are imported
# on their first request, and priming imports them all (decision 233). The kind's rules above hold for
# what the groups bring as well: an API is checked with every group loaded too.
NOT_IN_API_IMPORT_BY_SEGMENT = {
    "routes": "a route group, or what the groups share (a request imports its group, priming every one)",
    "schemas": "a route group's request and answer schemas (they come with the group)",
    "models": "the models a route group's services return (they come with the group)",
}
# Platform modules only a route group uses, which an API's own import loads none of (decision 238).
NOT_AT_API_IMPORT = {
    "shopfeed.platform.search": "the search port (the problem table takes SearchUnavailable from errors)",
    "shopfeed.platform.idempotency": "idempotent creates (http.created_response imports it when it answers)",
}
# What no other function may load: the HTTP resolver is an API's alone.
NOT_OUTSIDE_HTTP = {
    "aws_lambda_powertools.event_handler": "Powertools' HTTP resolver (only an HTTP entry point runs it)",
}
# What no function loads at import: a search engine's client is made where the engine is built (on the
# first search, or by priming at init).
NOT_AT_IMPORT = {
    "opensearchpy": "the OpenSearch client",
    "shopfeed.platform.search.opensearch": "the search engine adapter",
    # python-ulid reads its package metadata at import: loaded on the first id (decision 215).
    "ulid": "python-ulid (platform.clock imports it on the first id; priming makes one)",
}

_LOADED = """
import json, sys
sys.path[:0] = {paths!r}
{statement}
print(json.dumps(sorted(sys.modules)))
"""


def loaded_modules(statement: str, *paths: Path) -> frozenset[str]:
    """``sys.modules`` after ``statement`` in a fresh interpreter, ``paths`` first on sys.path."""
    environment = {k: v for k, v in os.environ.items() if k != "AWS_LAMBDA_FUNCTION_NAME"}
    environment |= {"AWS_REGION": "us-east-1", "POWERTOOLS_SERVICE_NAME": "shopfeed"}
    code = _LOADED.format(paths=[str(p) for p in paths], statement=statement)
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return frozenset(json.loads(done.stdout))


@dataclass(frozen=True)
class Function:
    """A function of the template as its import is checked: where its code is, whether HTTP reaches it."""

    name: str
    directory: Path
    module: str
    http: bool

    @property
    def entry_point(self) -> Path:
        return self.directory / f"{self.module}.py"


def functions() -> list[Function]:
    """Every serverless function of template.yaml whose code is in this repository."""
    template = cfn.load()
    found = []
    for name in cfn.resources("AWS::Serverless::Function"):
        props = cfn.function_properties(name, template)
        events = (props.get("Events") or {}).values()
        http = "FunctionUrlConfig" in props or any(event["Type"] in HTTP_EVENTS for event in events)
        module = str(props["Handler"]).rsplit(".", 1)[0]
        found.append(Function(name, ROOT / props["CodeUri"], module, http))
    return found


def served_contexts(entry_point: Path) -> frozenset[str]:
    """The shopfeed packages an entry point imports itself: the contexts (or composers) it serves."""
    served: set[str] = set()
    for node in ast.walk(ast.parse(entry_point.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        served.update(n.split(".")[1] for n in names if n.startswith("shopfeed.") and n.count(".") >= 1)
    return frozenset(served) - {"platform"}


def _module_of(name: str) -> str:
    """The module of an exposed name (``shopfeed.feed.posts.search.POSTS`` is in ``...posts.search``)."""
    parts = name.split(".")
    while not (
        SHARED.joinpath(*parts).with_suffix(".py").exists() or (SHARED.joinpath(*parts) / "__init__.py").exists()
    ):
        parts.pop()
    return ".".join(parts)


@cache
def composed_surface(composer: str) -> frozenset[str]:
    """The modules of other contexts that ``composer`` brings in: what loading the exposed names it
    imports loads (their own imports included), so a function serving it may load those and no more."""
    exposed = {name for names in EXPOSED.values() for name in names}
    used: set[str] = set()
    for source in (SHARED / "shopfeed" / composer).rglob("*.py"):
        tree = ast.parse(source.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported = [f"{node.module}.{alias.name}" for alias in node.names]
                used.update(_module_of(n) for n in imported if any(n == e or n.startswith(e + ".") for e in exposed))
    statement = "; ".join(f"import {module}" for module in sorted(used)) or "pass"
    return frozenset(m for m in loaded_modules(statement, SHARED) if m.startswith("shopfeed."))


def refused(
    modules: Iterable[str], *, http: bool, served: frozenset[str], allowed: frozenset[str] = frozenset()
) -> dict[str, str]:
    """Each loaded module a function of this kind may not load, with why."""
    rules: dict[str, str] = dict(NOT_AT_IMPORT)
    rules |= NOT_IN_HTTP if http else NOT_OUTSIDE_HTTP
    others = [c for c in CONTEXTS if c not in served and c not in COMPOSERS]
    rules |= {f"shopfeed.{context}": f"the {context} context, which this function does not serve" for context in others}
    endings = NOT_IN_HTTP_BY_NAME if http else {}
    found = {}
    for module in modules:
        for prefix, why in rules.items():
            if (module == prefix or module.startswith(prefix + ".")) and module not in allowed:
                found[module] = why
        for ending, why in endings.items():
            if module.startswith("shopfeed.") and module.endswith(ending):
                found[module] = why
    return found


def refused_at_api_import(modules: Iterable[str]) -> dict[str, str]:
    """Each module an API entry point's plain import may not load, with why (decision 233)."""
    found = {}
    for module in modules:
        segments = module.split(".")
        for segment, why in NOT_IN_API_IMPORT_BY_SEGMENT.items():
            if segments[0] == "shopfeed" and segment in segments[1:]:
                found[module] = why
        for prefix, why in NOT_AT_API_IMPORT.items():
            if module == prefix or module.startswith(prefix + "."):
                found[module] = why
    return found


def refused_consumers(function: str, modules: Iterable[str]) -> dict[str, str]:
    """Each loaded consumer module of another function, with why: a context's consumer handlers are one
    module per function, named after it (``shopfeed.<context>.consumers.<function>``), so a worker never
    loads what another consumer routes to."""
    found = {}
    for module in modules:
        parts = module.split(".")
        if len(parts) == 4 and parts[0] == "shopfeed" and parts[2] == "consumers" and parts[3] != function:
            found[module] = f"the {parts[3]} function's handlers"
    return found


def _refused_by(function: Function, modules: frozenset[str]) -> dict[str, str]:
    served = served_contexts(function.entry_point)
    allowed = frozenset().union(*(composed_surface(c) for c in served if c in COMPOSERS))
    found = refused(modules, http=function.http, served=served, allowed=allowed)
    return found | refused_consumers(function.directory.name, modules)


FUNCTIONS = functions()


def test_every_function_of_the_template_is_checked() -> None:
    on_disk = {p.parent.name for p in (ROOT / "functions").glob("*/app.py")}
    assert {f.directory.name for f in FUNCTIONS} == on_disk
    assert any(f.http for f in FUNCTIONS)
    assert not all(f.http for f in FUNCTIONS)


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.name)
def test_an_entry_point_imports_only_what_its_kind_runs(function: Function) -> None:
    # given a fresh interpreter, as a cold start has
    # when the entry point is imported as Lambda imports it (an API with every route group loaded too,
    # as its first requests or priming load them)
    statement = f"import {function.module}"
    if function.http:
        statement += f"; {function.module}.app.load_all()"
    modules = loaded_modules(statement, function.directory, SHARED)
    # then nothing its kind never runs was loaded
    found = _refused_by(function, modules)
    assert not found, "\n".join(f"{module}: {why}" for module, why in sorted(found.items()))


HTTP_FUNCTIONS = [f for f in FUNCTIONS if f.http]


@pytest.mark.parametrize("function", HTTP_FUNCTIONS, ids=lambda f: f.name)
def test_an_api_entry_point_imports_no_route_group_and_nothing_its_groups_declare(function: Function) -> None:
    # given a fresh interpreter, when the API's entry point is imported as Lambda imports it, unprimed
    modules = loaded_modules(f"import {function.module}", function.directory, SHARED)
    # then no route module, schema or model was loaded: a request imports its own group
    found = refused_at_api_import(modules)
    assert not found, "\n".join(f"{module}: {why}" for module, why in sorted(found.items()))
    # and loading the groups is what brings them (the rule is not vacuous)
    loaded = loaded_modules(f"import {function.module}; {function.module}.app.load_all()", function.directory, SHARED)
    assert {m for m in refused_at_api_import(loaded) if m.endswith(".routes") or ".routes." in m}


@pytest.mark.parametrize(
    ("module", "is_refused"),
    [
        ("shopfeed.commerce.routes.products", True),
        ("shopfeed.commerce.routes", True),
        ("shopfeed.accounts.routes", True),
        ("shopfeed.feed.routes.params", True),
        ("shopfeed.commerce.cart.schemas", True),
        ("shopfeed.feed.models", True),
        ("shopfeed.platform.models", True),
        ("shopfeed.platform.search.port", True),
        ("shopfeed.platform.idempotency", True),
        ("shopfeed.platform.problems", False),
        ("shopfeed.commerce.bootstrap", False),
        ("shopfeed.platform.http", False),
        ("aws_lambda_powertools.event_handler.openapi.models", False),
    ],
)
def test_a_route_group_module_at_an_api_import_is_caught(module: str, is_refused: bool) -> None:
    assert bool(refused_at_api_import([module])) is is_refused


# -- the rules themselves, on modules lists made up for the purpose ----------------------------------


@dataclass(frozen=True)
class Kind:
    http: bool
    served: frozenset[str]


COMMERCE_API = Kind(http=True, served=frozenset({"commerce", "accounts"}))
STREAM = Kind(http=False, served=frozenset({"commerce"}))


@pytest.mark.parametrize(
    ("kind", "module", "is_refused"),
    [
        (COMMERCE_API, "aws_lambda_powertools.utilities.batch.types", True),
        (COMMERCE_API, "aws_lambda_powertools.utilities.parser.models.kafka", True),
        (COMMERCE_API, "opensearchpy.client", True),
        (COMMERCE_API, "shopfeed.platform.search.opensearch", True),
        (COMMERCE_API, "shopfeed.feed.home.fanout", True),
        (COMMERCE_API, "shopfeed.indexing.bootstrap", False),
        (COMMERCE_API, "aws_lambda_powertools.event_handler.api_gateway", False),
        (COMMERCE_API, "shopfeed.platform.search.port", False),
        (COMMERCE_API, "shopfeed.platform.outbox_relay", True),
        (COMMERCE_API, "shopfeed.platform.exactly_once", True),
        (COMMERCE_API, "shopfeed.platform.streams", True),
        (COMMERCE_API, "shopfeed.platform.queues", True),
        (COMMERCE_API, "shopfeed.platform.search.sync", True),
        (COMMERCE_API, "shopfeed.platform.outbox", False),
        (COMMERCE_API, "shopfeed.platform.search.projection", False),
        (COMMERCE_API, "shopfeed.commerce.orders.repository", True),
        (COMMERCE_API, "shopfeed.accounts.repository", True),
        (COMMERCE_API, "shopfeed.commerce.settings", True),
        (COMMERCE_API, "shopfeed.accounts.settings", True),
        (COMMERCE_API, "shopfeed.commerce.payments.sandbox", True),
        (COMMERCE_API, "shopfeed.commerce.orders.services", False),
        (COMMERCE_API, "ulid", True),
        (STREAM, "shopfeed.commerce.orders.repository", False),
        (STREAM, "ulid", True),
        (STREAM, "aws_lambda_powertools.event_handler.api_gateway", True),
        (STREAM, "aws_lambda_powertools.utilities.batch.types", False),
        (STREAM, "shopfeed.accounts.bootstrap", False),
        (STREAM, "shopfeed.platform.outbox_relay", False),
        (STREAM, "shopfeed.platform.queues", False),
        (STREAM, "shopfeed.feed.models", True),
    ],
)
def test_a_deliberate_violation_is_caught(kind: Kind, module: str, is_refused: bool) -> None:
    assert bool(refused([module], http=kind.http, served=kind.served)) is is_refused


def test_another_functions_consumer_module_is_caught() -> None:
    loaded = [
        "shopfeed.commerce.consumers",
        "shopfeed.commerce.consumers.payment_worker",
        "shopfeed.commerce.consumers.stock_rebalancer",
        "shopfeed.feed.consumers.feed_stream",
    ]
    found = refused_consumers("payment_worker", loaded)
    assert sorted(found) == ["shopfeed.commerce.consumers.stock_rebalancer", "shopfeed.feed.consumers.feed_stream"]


def test_every_consumer_module_is_named_after_a_function_that_loads_it() -> None:
    named = {p.stem: p for p in SHARED.glob("shopfeed/*/consumers/*.py") if p.stem != "__init__"}
    assert named, "no consumer modules found"
    entry_points = {f.directory.name: f.entry_point.read_text() for f in FUNCTIONS}
    for name, path in named.items():
        context = path.parent.parent.name
        assert name in entry_points, f"{path}: no function is named {name}"
        assert f"shopfeed.{context}.consumers import {name}" in entry_points[name], path


def test_what_a_composer_brings_in_is_allowed_and_nothing_more() -> None:
    # given the modules accounts brings in of the feed (its profiles and models)
    surface = composed_surface("accounts")
    assert "shopfeed.feed.profiles" in surface
    # then a function serving accounts may load them, and not the rest of the feed
    loaded = [*surface, "shopfeed.feed.home.fanout"]
    found = refused(loaded, http=COMMERCE_API.http, served=COMMERCE_API.served, allowed=surface)
    assert list(found) == ["shopfeed.feed.home.fanout"]


def test_an_entry_point_serves_the_contexts_it_imports(tmp_path: Path) -> None:
    entry_point = tmp_path / "app.py"
    entry_point.write_text("from shopfeed.accounts import bootstrap\nfrom shopfeed.commerce.routes import cart\n")
    assert served_contexts(entry_point) == {"accounts", "commerce"}
