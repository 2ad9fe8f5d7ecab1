"""The built layers as SAM's layer cache holds downloaded ones, so that `sam local` builds an image once.

SAM builds a function's image (the Lambda base image plus its layers) whenever it starts a container
for a function with a layer defined in the template: ``LambdaImage.build`` rebuilds when any layer
``is_defined_within_template``, because it cannot tell whether a local layer changed
(aws-sam-cli#3725). That was ~12 s of every ~25 s ``sam local invoke`` here. A layer named by ARN is
read from SAM's layer cache (``--layer-cache-basedir``) when the cache holds it, and the image,
tagged by the runtime and the layers' names, is then built once and reused by every later container.

So the template the invocations run (``pin``) names each built layer by an ARN that carries a hash of
the layer's content, and the cache holds the built directory under the name SAM derives from that ARN.
A changed layer gets a new name, a new cache entry and a new image; an unchanged one reuses all three.
Nothing is downloaded: SAM fetches an ARN layer only when its cache lacks it, and the account in the
ARN (``000000000000``) exists nowhere.
"""

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import yaml

ACCOUNT = "000000000000"
PREFIX = "samlocal-"


def content_hash(directory: Path) -> str:
    """A hash of every file's path and bytes under ``directory`` (a built layer: ~3,300 files, 70 MB)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(directory)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def arn(logical_id: str, digest: str, region: str = "us-east-1") -> str:
    return f"arn:aws:lambda:{region}:{ACCOUNT}:layer:{PREFIX}{logical_id}-{digest[:16]}:1"


def cache_name(layer_arn: str) -> str:
    """The directory SAM looks for ``layer_arn`` under in its layer cache: ``<name>-<version>-<sha256 of
    the ARN, 10 hex digits>`` (samcli.lib.providers.provider.LayerVersion._compute_layer_name)."""
    _, name, version = layer_arn.rsplit(":", 2)
    return f"{name}-{version}-{hashlib.sha256(layer_arn.encode()).hexdigest()[:10]}"


def _cache(directory: Path, cache: Path, name: str) -> None:
    target = cache / name
    if target.exists():
        return
    partial = cache / f".{name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    # Hard links: a copy that costs no bytes. The build replaces a changed layer's files, and a changed
    # layer is cached under a new name anyway.
    shutil.copytree(directory, partial, copy_function=os.link)
    partial.rename(target)


def _replace(node: Any, arns: dict[str, str]) -> Any:
    """Each ``{"Ref": <layer>}`` in a Layers list replaced by that layer's ARN."""
    if isinstance(node, dict):
        return {key: _layers(value, arns) if key == "Layers" else _replace(value, arns) for key, value in node.items()}
    if isinstance(node, list):
        return [_replace(value, arns) for value in node]
    return node


def _layers(value: Any, arns: dict[str, str]) -> Any:
    if not isinstance(value, list):
        return value
    return [arns.get(layer.get("Ref", "")) or layer if isinstance(layer, dict) else layer for layer in value]


def pin(built_template: Path, cache: Path, written: Path) -> Path:
    """``built_template`` (sam build's output) with its layers named by content ARNs, written to
    ``written`` beside it (so relative code paths resolve alike); the cache holds exactly those layers."""
    template: dict[str, Any] = yaml.safe_load(built_template.read_text())
    arns: dict[str, str] = {}
    cache.mkdir(parents=True, exist_ok=True)
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::LayerVersion":
            continue
        directory = built_template.parent / resource["Properties"]["ContentUri"]
        arns[logical_id] = arn(logical_id, content_hash(directory))
        _cache(directory, cache, cache_name(arns[logical_id]))
    current = {cache_name(value) for value in arns.values()}
    for entry in cache.iterdir():
        if entry.name.startswith(PREFIX) and entry.name not in current:
            shutil.rmtree(entry, ignore_errors=True)
    pinned = _replace(template, arns)
    # The layer resources stay (nothing refers to them now); the functions run the cached copies.
    written.write_text(json.dumps(pinned, indent=1) + "\n")
    return written
