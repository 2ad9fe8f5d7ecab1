"""The template sam local runs names its built layers by content ARNs held in SAM's layer cache (no
container needed)."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from local.samlocal import layers

pytestmark = [pytest.mark.samlocal, pytest.mark.xdist_group("samlocal")]


def built(directory: Path, module_text: str = "VALUE = 1\n") -> Path:
    """A template as sam build writes it: a layer in Globals, another on one function."""
    (directory / "SharedLayer" / "python" / "shared").mkdir(parents=True)
    (directory / "SharedLayer" / "python" / "shared" / "__init__.py").write_text(module_text)
    (directory / "OwnLayer" / "python").mkdir(parents=True)
    (directory / "OwnLayer" / "python" / "own.py").write_text("OWN = 1\n")
    template = {
        "Globals": {"Function": {"Layers": [{"Ref": "SharedLayer"}]}},
        "Resources": {
            "ApiFunction": {
                "Type": "AWS::Serverless::Function",
                "Properties": {"CodeUri": "ApiFunction", "Layers": [{"Ref": "OwnLayer"}]},
            },
            "WorkerFunction": {"Type": "AWS::Serverless::Function", "Properties": {"CodeUri": "WorkerFunction"}},
            "SharedLayer": {"Type": "AWS::Serverless::LayerVersion", "Properties": {"ContentUri": "SharedLayer"}},
            "OwnLayer": {"Type": "AWS::Serverless::LayerVersion", "Properties": {"ContentUri": "OwnLayer"}},
        },
    }
    path = directory / "template.yaml"
    path.write_text(yaml.safe_dump(template))
    return path


def pin(template: Path, cache: Path) -> dict[str, Any]:
    written = layers.pin(template, cache, template.with_name("run-template.json"))
    pinned: dict[str, Any] = json.loads(written.read_text())
    return pinned


def test_the_run_template_names_each_layer_by_an_arn_whose_cache_entry_holds_the_built_layer(tmp_path: Path) -> None:
    # given
    template = built(tmp_path / "build")
    cache = tmp_path / "layers"

    # when
    pinned = pin(template, cache)

    # then
    [shared] = pinned["Globals"]["Function"]["Layers"]
    [own] = pinned["Resources"]["ApiFunction"]["Properties"]["Layers"]
    assert shared.startswith("arn:aws:lambda:us-east-1:000000000000:layer:samlocal-SharedLayer-")
    assert own.startswith("arn:aws:lambda:us-east-1:000000000000:layer:samlocal-OwnLayer-")
    assert pinned["Resources"]["ApiFunction"]["Properties"]["CodeUri"] == "ApiFunction"
    cached = cache / layers.cache_name(shared) / "python" / "shared" / "__init__.py"
    assert cached.read_text() == "VALUE = 1\n"
    assert {entry.name for entry in cache.iterdir()} == {layers.cache_name(shared), layers.cache_name(own)}


def test_a_changed_layer_gets_a_new_arn_and_the_old_cache_entry_goes(tmp_path: Path) -> None:
    # given
    cache = tmp_path / "layers"
    before = pin(built(tmp_path / "first"), cache)
    same = pin(built(tmp_path / "again"), cache)

    # when
    after = pin(built(tmp_path / "changed", module_text="VALUE = 2\n"), cache)

    # then
    assert same["Globals"] == before["Globals"]
    [old], [new] = before["Globals"]["Function"]["Layers"], after["Globals"]["Function"]["Layers"]
    assert new != old
    assert after["Resources"]["ApiFunction"] == before["Resources"]["ApiFunction"]  # its layer did not change
    assert not (cache / layers.cache_name(old)).exists()
    assert (cache / layers.cache_name(new) / "python" / "shared" / "__init__.py").read_text() == "VALUE = 2\n"


def test_the_cache_entry_is_named_as_sam_names_a_downloaded_layer() -> None:
    # The name samcli.lib.providers.provider.LayerVersion(arn, None).name gives (aws-sam-cli 1.x): were it
    # another, SAM would find no cached layer and try to download this one from an account that does not exist.
    arn = "arn:aws:lambda:us-east-1:000000000000:layer:samlocal-SharedLayer-0123456789abcdef:1"

    assert layers.cache_name(arn) == "samlocal-SharedLayer-0123456789abcdef-1-f6becdd011"
