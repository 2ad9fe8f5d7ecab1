"""Every API function of the template with each port its routes depend on replaced by one that must
not be used: the edge's refusals (identity, media type, undecodable bodies) come before any storage."""

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from local import cfn
from local.harness.client import ApiClient
from shopfeed.accounts import bootstrap as accounts
from shopfeed.commerce import bootstrap as commerce
from shopfeed.feed import bootstrap as feed
from tests.support.http_edge import ROUTES

# What the API routes get through Powertools Depends (the composition roots' providers).
PROVIDERS: tuple[Callable[[], object], ...] = (
    *commerce.API_PORTS,
    accounts.accounts,
    *feed.API_PORTS,
    *feed.API_PORTS_ON_FIRST_USE,
)


@dataclass
class Untouched:
    """A port the edge must answer without: every call made on it is logged, then refused."""

    name: str
    calls: list[str]

    def __getattr__(self, method: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(f"{self.name}.{method}")
            raise AssertionError(f"{self.name}.{method} was called: the request reached storage")

        return call


@dataclass
class Edge:
    """The API functions' handlers, their ports untouched; ``calls`` is every call made on a port."""

    handlers: dict[str, Callable[[dict[str, Any], Any], dict[str, Any]]]
    calls: list[str] = field(default_factory=list)

    def client_of(self, function: str, sub: str | None, *groups: str) -> ApiClient:
        return ApiClient(self.handlers[function], sub, groups)


@contextmanager
def every_api() -> Iterator[Edge]:
    """The template's API functions (those ROUTES reach), for the block, on ``Untouched`` ports."""
    functions = sorted({cfn.function_for(method, path) for method, path, *_ in ROUTES})
    modules = {function: importlib.import_module(cfn.handler_module(function)) for function in functions}
    edge = Edge({function: module.lambda_handler for function, module in modules.items()})
    ports = {provider: Untouched(provider.__qualname__, edge.calls) for provider in PROVIDERS}
    saved = {function: dict(module.app.dependency_overrides) for function, module in modules.items()}
    for module in modules.values():
        module.app.dependency_overrides.update({provider: (lambda port=port: port) for provider, port in ports.items()})
    try:
        yield edge
    finally:
        for function, module in modules.items():
            module.app.dependency_overrides.clear()
            module.app.dependency_overrides.update(saved[function])
