"""Generate the OpenAPI document from the code (``make openapi`` writes docs/openapi.json).

Each HTTP function's resolver describes its own routes (Powertools event handler); this merges them
into one document for the one API, adds the bearer-token scheme and the problem+json schema.
A test regenerates it and fails when the committed file drifts from the routes.
"""

import importlib
import json
import sys
from typing import Any

from local import cfn

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
    return merged


def render() -> str:
    return json.dumps(document(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
