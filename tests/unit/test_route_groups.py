"""Each API's route table (decisions 233–235): which route group serves each route key API Gateway sends.

The entry point imports no route group; a request loads the group its ``routeKey`` names. The table must
hold what the routers declare and what template.yaml routes to the function, and a group loaded without
the others must dispatch every path as the resolver with every group does. Powertools tries its static
routes before its dynamic ones and dynamic ones in the order they were registered, so a lazily loaded
resolver, whose order is the order requests came in, could answer a path with another route than the
full one. The proof is pairwise: whatever groups a container has loaded, a path is answered by another
route only if some loaded route matches it ahead of the right one, and then the two groups alone, loaded
in that order, answer it wrongly too. So every ordered pair of groups (and each group alone) is loaded,
and every path API Gateway would send either group is dispatched and compared.
"""

import importlib
import itertools
import json
import re
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from pydantic import BaseModel

from local import cfn
from local.harness.apigw import http_event, route_key
from local.harness.client import LambdaContext
from shopfeed.platform import warmup
from shopfeed.platform.http import LazyResolver, lazy_resolver

APIS = {name: cfn.handler_module(name) for name in cfn.api_functions()}
_PARAMETER = re.compile(r"<(\w+)>")


def entry_point(function: str) -> ModuleType:
    return importlib.import_module(APIS[function])


def table(function: str) -> dict[str, tuple[str, ...]]:
    groups: dict[str, tuple[str, ...]] = entry_point(function).ROUTE_GROUPS
    return groups


def routes(resolver: APIGatewayHttpResolver) -> Iterator[tuple[str, Any]]:
    """(route key as API Gateway writes it, Powertools' route) of every route registered in ``resolver``."""
    # Powertools keeps its routes in these two lists and offers no public iterator over them.
    for route in (*resolver._static_routes, *resolver._dynamic_routes):
        yield f"{route.method} {_PARAMETER.sub(r'{\1}', route.path)}", route


def served_by(app: Any, next_middleware: Any) -> Response[str]:
    """In place of the request guard (the first middleware of every route): names the function of the
    route Powertools matched, and runs nothing else."""
    function = app.context["_route"].func
    return Response(status_code=200, content_type="text/plain", body=f"{function.__module__}.{function.__qualname__}")


def spied(resolver: LazyResolver) -> LazyResolver:
    resolver._request_validation_middleware = served_by  # type: ignore[attr-defined]
    return resolver


def dispatch(resolver: LazyResolver, method: str, path: str, key: str) -> str:
    event = http_event(method, path)
    event["routeKey"] = key
    return str(resolver.resolve(event, LambdaContext())["body"])


def lazy_mismatches(groups: dict[str, tuple[str, ...]], paths: list[tuple[str, str, str]]) -> list[tuple[str, ...]]:
    """Where a resolver holding one group, or two loaded in either order, answers one of ``paths``
    ((method, path, route key)) with another function than the resolver holding every group."""
    group_of = {key: module for module, keys in groups.items() for key in keys}
    full = spied(lazy_resolver(groups))
    full.load_all()
    expected = {(method, path): dispatch(full, method, path, key) for method, path, key in paths}
    found = []
    for first, second in [*((g, g) for g in groups), *itertools.permutations(groups, 2)]:
        resolver = spied(lazy_resolver(groups))
        resolver.load(first, second)
        for method, path, key in paths:
            if group_of[key] in (first, second):
                served = dispatch(resolver, method, path, key)
                if served != expected[method, path] or resolver.loaded != tuple(dict.fromkeys((first, second))):
                    found.append((first, second, method, path, served, expected[method, path]))
    return found


def template_keys(function: str) -> set[str]:
    return {route.key for route in cfn.http_api_routes() if route.function == function}


def sent_paths(function: str) -> list[tuple[str, str, str]]:
    """(method, path, route key) of paths API Gateway would send ``function``: each route with its
    parameters as ``x`` and, one at a time, as every literal segment of the API's routes (``me``,
    ``search``, ``read``: where a dynamic route could shadow a static one)."""
    keys = template_keys(function)
    literals = {s for key in keys for s in key.split(" ", 1)[1].split("/") if s and not s.startswith("{")}
    found = set()
    for key in keys:
        method, template = key.split(" ", 1)
        names = re.findall(r"\{(\w+)\}", template)
        plain = dict.fromkeys(names, "x")
        choices = [plain] + [plain | {name: literal} for name in names for literal in sorted(literals)]
        for values in choices:
            path = re.sub(r"\{(\w+)\}", lambda m, v=values: v[m.group(1)], template)  # type: ignore[misc]
            selected = route_key(method, path)
            if selected in keys:  # another function's route, or none: API Gateway does not send it here
                found.add((method, path, selected))
    return sorted(found)


@pytest.mark.parametrize("function", sorted(APIS))
def test_the_table_lists_each_groups_routes_as_its_router_declares_them(function: str) -> None:
    # given each group of the table, imported as a request would import it
    for module, keys in table(function).items():
        # when its router's routes are listed
        resolver = APIGatewayHttpResolver()
        resolver.include_router(importlib.import_module(module).router)
        declared = sorted(key for key, _ in routes(resolver))
        # then the table names exactly those (a route added to a router and not here fails)
        assert sorted(keys) == declared, f"{function}'s ROUTE_GROUPS[{module!r}] should be {tuple(declared)}"


@pytest.mark.parametrize("function", sorted(APIS))
def test_no_group_changes_the_whole_api_when_it_is_included(function: str) -> None:
    # Powertools makes a router's middlewares (router.use) and exception handlers the whole resolver's
    # when it includes the router: loaded lazily, they would reach the other groups' routes only after
    # this group's first request (and never a route whose middleware stack was built before). Such a
    # thing belongs to platform.http's resolver, for every route at once.
    for module in table(function):
        router = importlib.import_module(module).router
        assert router._router_middlewares == [], module
        assert router._exception_handlers == {}, module
        assert router.context == {}, module


@pytest.mark.parametrize("function", sorted(APIS))
def test_the_table_holds_the_routes_the_template_sends_the_function_each_once(function: str) -> None:
    listed = [key for keys in table(function).values() for key in keys]
    assert len(listed) == len(set(listed))
    assert set(listed) == template_keys(function)


@pytest.mark.parametrize("function", sorted(APIS))
def test_priming_loads_every_group_before_it_builds_the_models_and_sends_every_route(function: str) -> None:
    # given a resolver of the entry point's table that has served nothing (a plain import's)
    assert isinstance(entry_point(function).app, LazyResolver)
    fresh = lazy_resolver(table(function))
    assert fresh.loaded == ()
    # when init primes it, as in Lambda
    warmup.prime_now(resolver=fresh)
    # then every group is loaded in the table's order, each route once
    assert fresh.loaded == tuple(table(function))
    keys = [key for key, _ in routes(fresh)]
    # and what Powertools works out on a handler's first call is worked out (decision 249)
    uninspected = [key for key, route in routes(fresh) if not route.request_param_name_checked]
    assert uninspected == []
    assert all(route._has_dependencies is not None for _, route in routes(fresh))
    assert len(keys) == len(set(keys))
    assert set(keys) == template_keys(function)
    # and the models the groups brought were built with the rest (the routes' requests are not slower)
    unbuilt = [
        f"{name}.{value.__name__}"
        for name, module in list(sys.modules.items())
        if name.startswith("shopfeed.")
        for value in list(vars(module).values())
        if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == name
        if not value.__pydantic_complete__
    ]
    assert unbuilt == []


@pytest.mark.parametrize("function", sorted(APIS))
def test_priming_sends_each_route_its_query_parameters_so_their_validation_runs_at_init(
    function: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a fresh resolver whose requests are recorded
    fresh = lazy_resolver(table(function))
    sent: dict[str, set[str]] = {}
    resolve = fresh.resolve

    def recorded(event: dict[str, Any], context: Any) -> dict[str, Any]:
        sent[event["routeKey"]] = set(event.get("queryStringParameters") or {})
        return resolve(event, context)

    monkeypatch.setattr(fresh, "resolve", recorded)

    # when priming sends every route its request
    warmup.resolve_every_route(fresh)

    # then each carried every query parameter its route declares (decision 249)
    declared = {key: {param.alias for param in route.dependant.query_params} for key, route in routes(fresh)}
    assert sent == declared
    assert any(declared.values())


@pytest.mark.parametrize("function", sorted(APIS))
def test_the_openapi_document_of_a_resolver_that_served_one_group_has_every_route(function: str) -> None:
    # given a resolver that loaded one group only
    resolver = lazy_resolver(table(function))
    resolver.load(next(iter(table(function))))
    # when its OpenAPI document is made, then it has the whole API's routes
    document = resolver.get_openapi_schema()
    operations = {
        f"{method.upper()} {path}"
        for path, item in document.paths.items()
        for method in vars(item)
        if getattr(item, method) is not None and method in {"get", "post", "put", "patch", "delete"}
    }
    assert operations == template_keys(function)


def test_a_request_loads_the_group_of_its_route_key_and_no_other() -> None:
    # given a commerce API resolver that has served nothing
    resolver = lazy_resolver(table("CommerceApiFunction"))
    # when a product is read (anonymously: refused after the route is matched)
    answer = resolver.resolve(http_event("GET", "/products/P-1"), LambdaContext())
    # then only the products group was imported and included
    assert answer["statusCode"] == 401
    assert resolver.loaded == ("shopfeed.commerce.routes.products",)
    # when an order is read next
    resolver.resolve(http_event("GET", "/orders/O-1"), LambdaContext())
    # then its group joins, and the first is not included again
    assert resolver.loaded == ("shopfeed.commerce.routes.products", "shopfeed.commerce.routes.orders")
    keys = [key for key, _ in routes(resolver)]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/no/such/route"), ("DELETE", "/products/P-1"), ("OPTIONS", "/products"), ("GET", "/feed")],
)
def test_a_route_key_outside_the_table_loads_every_group_and_gets_the_answer_of_the_full_resolver(
    method: str, path: str
) -> None:
    # given a fresh commerce API resolver, and one with everything loaded (as primed)
    fresh, full = lazy_resolver(table("CommerceApiFunction")), lazy_resolver(table("CommerceApiFunction"))
    full.load_all()
    event = http_event(method, path, claims={"sub": "U100"})
    assert event["routeKey"] not in {key for keys in table("CommerceApiFunction").values() for key in keys}
    # when a path no route of this API serves arrives ($default, or a feed route sent here)
    answer = fresh.resolve(event, LambdaContext())
    # then every group was loaded, and the answer is the full resolver's, byte for byte
    assert fresh.loaded == tuple(table("CommerceApiFunction"))
    assert answer == full.resolve(event, LambdaContext())
    assert answer["statusCode"] == 404


@pytest.mark.parametrize("function", sorted(APIS))
def test_the_full_resolver_answers_each_path_with_the_route_api_gateway_selects(function: str) -> None:
    # given every group loaded (as primed), and the paths API Gateway would send this function
    full = spied(lazy_resolver(table(function)))
    full.load_all()
    handler_of = {key: f"{r.func.__module__}.{r.func.__qualname__}" for key, r in routes(full)}
    # when each is dispatched, then it reaches the function of the route key the event names
    wrong = {
        (method, path): served
        for method, path, key in sent_paths(function)
        if (served := dispatch(full, method, path, key)) != handler_of[key]
    }
    assert not wrong, wrong


@pytest.mark.parametrize("function", sorted(APIS))
def test_a_group_loaded_alone_or_beside_any_other_dispatches_every_path_as_every_group_loaded(function: str) -> None:
    assert lazy_mismatches(table(function), sent_paths(function)) == []


def test_the_comparison_catches_a_dynamic_route_that_takes_a_path_when_loaded_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given two groups whose dynamic routes both match /a/c/b: registered B first, the full resolver
    # answers it with B's (as API Gateway would: the literal segment comes first in B's)
    shadowing, specific = Router(), Router()

    @shadowing.get("/a/<x>/b")
    def a_route(x: str) -> dict[str, str]:
        return {}

    @specific.get("/a/c/<y>")
    def b_route(y: str) -> dict[str, str]:
        return {}

    for name, router in (("group_b", specific), ("group_a", shadowing)):
        module = ModuleType(name)
        module.router = router  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, name, module)
    groups = {"group_b": ("GET /a/c/{y}",), "group_a": ("GET /a/{x}/b",)}
    # when a container served a request of A before one of B, then the path goes to A's route: caught
    mismatches = lazy_mismatches(groups, [("GET", "/a/c/b", "GET /a/c/{y}"), ("GET", "/a/x/b", "GET /a/{x}/b")])
    assert [(first, second, path) for first, second, _, path, *_ in mismatches] == [("group_a", "group_b", "/a/c/b")]


def test_the_paths_compared_include_those_a_dynamic_route_could_take_from_a_static_one() -> None:
    # the literal segments stand in for parameters: /users/me/orders is a path the dynamic
    # /users/{user_id}/reviews's siblings could shadow, and it must reach the orders group
    paths = {(m, p): k for m, p, k in sent_paths("CommerceApiFunction")}
    assert paths["GET", "/users/me/orders"] == "GET /users/me/orders"
    assert paths["GET", "/users/me"] == "GET /users/{user_id}"
    assert paths["GET", "/products/x/reviews/me"] == "GET /products/{product_id}/reviews/{user_id}"
    assert len(paths) > 3 * len(template_keys("CommerceApiFunction"))


@pytest.mark.parametrize(
    ("method", "path", "key"),
    [
        ("GET", "/products/P-1", "GET /products/{product_id}"),
        ("GET", "/users/me/orders", "GET /users/me/orders"),
        ("GET", "/users/me", "GET /users/{user_id}"),
        ("PATCH", "/users/me", "PATCH /users/me"),
        ("POST", "/notifications/read", "POST /notifications/read"),
        ("POST", "/notifications/N-1/read", "POST /notifications/{notification_id}/read"),
        ("GET", "/users/Ada%20Lovelace/posts", "GET /users/{user_id}/posts"),
        ("DELETE", "/products/P-1", "$default"),
        ("GET", "/no/such/route", "$default"),
    ],
)
def test_the_test_client_names_the_route_api_gateway_selects(method: str, path: str, key: str) -> None:
    event = http_event(method, path)
    assert event["routeKey"] == event["requestContext"]["routeKey"] == key


def test_the_sample_events_name_routes_of_the_template_that_select_their_paths() -> None:
    every_key = {route.key for route in cfn.http_api_routes()}
    for sample in sorted((cfn.ROOT / "events" / "api").glob("*.json")):
        event = json.loads(sample.read_text())
        assert event["routeKey"] in every_key, sample.name
        assert route_key(event["requestContext"]["http"]["method"], event["rawPath"]) == event["routeKey"], sample.name
