"""The template `sam local` builds from: template.yaml with the few changes a local container needs.

template.yaml stays the deployed truth; this derived copy (JSON, written under .aws-sam/samlocal/) only
- builds for this machine's architecture: the Architecture parameter's default and every layer's
  ``Metadata.BuildArchitecture``. ``--parameter-overrides`` does not reach Metadata: SAM 1.170 then
  builds the layer's pydantic_core for aarch64 and the x86_64 container cannot import it;
- declares the variables of ``local.samlocal.env`` on every function, because SAM's ``--env-vars``
  only overrides variables a function already declares;
- wraps each HTTP API function in ``samlocal_authorizer`` (a layer of its own), because
  ``sam local start-api`` skips JWT authorizers and shopfeed's routes need the caller's claims.
Relative paths (CodeUri, ContentUri) stay relative: SAM resolves them with ``--base-dir`` (the repo).
"""

import copy
from pathlib import Path
from typing import Any

from local import cfn
from local.samlocal import env

AUTHORIZER_LAYER = "SamLocalAuthorizerLayer"
AUTHORIZER_HANDLER = "samlocal_authorizer.lambda_handler"
AUTHORIZER_SOURCE = Path(__file__).resolve().parent / "authorizer_layer"


def _serves_http(function: dict[str, Any]) -> bool:
    events = function["Properties"].get("Events") or {}
    return any(event["Type"] in {"HttpApi", "Api"} for event in events.values())


def derive(architecture: str, template: dict[str, Any] | None = None) -> dict[str, Any]:
    """template.yaml (intrinsics in their long form) adapted to run under sam local on ``architecture``."""
    derived = copy.deepcopy(template if template is not None else cfn.load())
    derived["Parameters"]["Architecture"]["Default"] = architecture

    globals_ = derived.setdefault("Globals", {}).setdefault("Function", {})
    declared = globals_.setdefault("Environment", {}).setdefault("Variables", {})
    for name in env.names():
        declared.setdefault(name, "")

    resources = derived["Resources"]
    for resource in resources.values():
        if resource["Type"] == "AWS::Serverless::LayerVersion" and "BuildArchitecture" in resource.get("Metadata", {}):
            resource["Metadata"]["BuildArchitecture"] = architecture

    for resource in resources.values():
        if resource["Type"] != "AWS::Serverless::Function" or not _serves_http(resource):
            continue
        props = resource["Properties"]
        own = props.setdefault("Environment", {}).setdefault("Variables", {})
        own["SAMLOCAL_HANDLER"] = props["Handler"]
        props["Handler"] = AUTHORIZER_HANDLER
        # SAM appends a function's own Layers to the Globals ones, so the shared layer stays first.
        props["Layers"] = [*props.get("Layers", []), {"Ref": AUTHORIZER_LAYER}]

    resources[AUTHORIZER_LAYER] = {
        "Type": "AWS::Serverless::LayerVersion",
        "Properties": {
            "Description": "sam local only: JWT claims for start-api, which skips JWT authorizers",
            "ContentUri": str(AUTHORIZER_SOURCE.relative_to(cfn.ROOT)),
            "CompatibleRuntimes": ["python3.13"],
        },
        "Metadata": {"BuildMethod": "python3.13", "BuildArchitecture": architecture},
    }
    return derived


def write(path: Path, architecture: str) -> Path:
    """Write the derived template to ``path`` unless it already holds the same text (keeps builds cached)."""
    text = cfn.dumps(derive(architecture)) + "\n"
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path
