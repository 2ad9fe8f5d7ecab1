"""Generate the OpenAPI document from the code (``make openapi`` writes docs/openapi.json and the
README's route table).

Each HTTP function's resolver describes its own routes (Powertools event handler); this merges them
into one document for the one API, adds the bearer-token scheme and the problem+json schema.
Tests regenerate both and fail when a committed copy drifts from the routes: a new route is listed
in the README by running ``make openapi``, never by hand.
"""

import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from local import cfn
from shopfeed.platform import errors, problems

TITLE = "shopfeed API"
VERSION = "1.0.0"


def document() -> dict[str, Any]:
    from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

    merged: dict[str, Any] | None = None
    for module_name in (cfn.handler_module(function) for function in cfn.api_functions()):
        app = importlib.import_module(module_name).app
        spec = json.loads(
            app.get_openapi_json_schema(
                title=TITLE,
                version=VERSION,
                description="Serverless e-commerce and social feed on DynamoDB. Errors are application/problem+json.",
                security_schemes={"bearer": HTTPBearer(bearerFormat="JWT")},
                security=[{"bearer": []}],
            )
        )
        if merged is None:
            merged = spec
            continue
        merged["paths"].update(spec["paths"])
        merged.setdefault("components", {}).setdefault("schemas", {}).update(
            spec.get("components", {}).get("schemas", {})
        )
    assert merged is not None
    for operation in (op for path in merged["paths"].values() for op in path.values()):
        _as_served(operation)
    merged["components"]["schemas"]["GatewayMessage"] = GATEWAY_MESSAGE
    return merged


# API Gateway's JWT authorizer refuses a request before the function runs, in its own JSON shape.
GATEWAY_MESSAGE = {
    "type": "object",
    "properties": {"message": {"type": "string", "examples": ["Unauthorized"]}},
    "required": ["message"],
    "title": "GatewayMessage",
}


def _as_served(operation: dict[str, Any]) -> None:
    """What Powertools cannot say from a route's signature: the headers a route refuses to go without
    (its documented 400/428 problems say so; they stay optional in the signature so that their absence
    is that problem, not a schema error), the gateway's 401, and the request guard's 400/413/415."""
    responses = operation["responses"]
    required = {
        "idempotency-key": problems.PROBLEMS[errors.MissingIdempotencyKey].title in _titles(responses, 400),
        "if-match": problems.PROBLEMS[errors.PreconditionRequired].title in _titles(responses, 428),
    }
    for parameter in operation.get("parameters", []):
        name = parameter["name"].lower()
        if parameter["in"] == "header" and required.get(name):
            schema = parameter["schema"]
            string = next(s for s in schema.pop("anyOf") if s.get("type") == "string")
            parameter["required"] = True
            parameter["schema"] = {**schema, **string, "pattern": _SERVED_HEADER[name]}
    responses["401"]["content"]["application/json"] = {"schema": {"$ref": "#/components/schemas/GatewayMessage"}}
    responses["401"]["description"] += " (API Gateway answers application/json, the function problem+json)"
    if "requestBody" in operation:
        for error in (errors.MalformedBody, errors.UnsupportedMediaType, errors.BodyTooLarge):
            spec = problems.PROBLEMS[error]
            documented = responses.setdefault(
                str(int(spec.status)), {"description": "", "content": {problems.PROBLEM_JSON: _PROBLEM_SCHEMA}}
            )
            documented["description"] = "; ".join(filter(None, [documented["description"], spec.title]))


_PROBLEM_SCHEMA = {"schema": {"$ref": "#/components/schemas/Problem"}}
# The values that can succeed: printable, not blank (platform.idempotency); a strong ETag (platform.versioning).
_SERVED_HEADER = {"idempotency-key": r"^[!-~]([ -~]{0,253}[!-~])?$", "if-match": r'^"[0-9]{1,18}"$'}


def _titles(responses: dict[str, Any], status: int) -> list[str]:
    return str(responses.get(str(status), {}).get("description", "")).split("; ")


def render() -> str:
    return json.dumps(document(), indent=2, sort_keys=True) + "\n"


# -- the README's route table ------------------------------------------------------------------------

README = cfn.ROOT / "README.md"
TABLE_START = "<!-- routes: generated from docs/openapi.json by `make openapi` -->"
TABLE_END = "<!-- /routes -->"


_METHOD_ORDER = ("get", "post", "put", "patch", "delete")


def route_table(spec: dict[str, Any]) -> str:
    """One row per operation, by path: the route, what its summary says, the headers it requires and
    its page size (default, and maximum)."""
    rows = ["| route | what | needs | page |", "|---|---|---|---|"]
    for path, methods in sorted(spec["paths"].items()):
        for method, operation in sorted(methods.items(), key=lambda m: _METHOD_ORDER.index(m[0])):
            parameters = {p["name"].lower(): p for p in operation.get("parameters", [])}
            needs = [h.title() for h in ("idempotency-key", "if-match") if parameters.get(h, {}).get("required")]
            limit = parameters.get("limit", {}).get("schema", {})
            page = f"{limit['default']} (≤ {int(limit['maximum'])})" if {"default", "maximum"} <= limit.keys() else ""
            summary = operation.get("summary", "").replace("|", "\\|")
            rows.append(f"| `{method.upper()} {path}` | {summary} | {', '.join(f'`{n}`' for n in needs)} | {page} |")
    return "\n".join(rows) + "\n"


def with_route_table(readme: str, spec: dict[str, Any]) -> str:
    """The README with its route table replaced by the one ``spec`` gives."""
    pattern = re.compile(re.escape(TABLE_START) + r"\n.*?" + re.escape(TABLE_END), re.DOTALL)
    if not pattern.search(readme):
        raise ValueError(f"README.md has no {TABLE_START} ... {TABLE_END} block")
    return pattern.sub(lambda _: f"{TABLE_START}\n{route_table(spec)}{TABLE_END}", readme)


def write(openapi: Path, readme: Path = README) -> None:
    text = render()
    openapi.write_text(text)
    readme.write_text(with_route_table(readme.read_text(), json.loads(text)))


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else cfn.ROOT / "docs" / "openapi.json")
