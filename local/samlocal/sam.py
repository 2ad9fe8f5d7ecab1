"""Run `sam local` against a local DynamoDB: the one place that knows the paths, flags and environment.

    python -m local.samlocal build
    python -m local.samlocal invoke CommerceApiFunction -e events/api/place_order.json
    python -m local.samlocal start-api --port 3001

Every command builds first (``sam build --cached``: seconds when nothing changed) from the derived
template (``local.samlocal.template``) and writes the ``--env-vars`` file (``local.samlocal.env``) for
the DynamoDB at ``--dynamodb-endpoint``: by default ``$AWS_ENDPOINT_URL_DYNAMODB``, else the one the
running local stack (`make dev`) reports on its ``/__local/stack`` page. Work files live in
.aws-sam/samlocal/. Arguments after the known options go to sam unchanged.

The container runtime is Docker's default socket, or ``$DOCKER_HOST``; values in .tools/samlocal.env
(written by local/samlocal/setup.sh for podman) apply when the shell has not set them.
"""

import argparse
import http.client
import json
import os
import platform
import shlex
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from local.cfn import ROOT
from local.samlocal import env, layers, template

SAM = ROOT / ".tools" / "bin" / "sam"
SETTINGS_FILE = ROOT / ".tools" / "samlocal.env"
WORK = ROOT / ".aws-sam" / "samlocal"
DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"
# What the tier and the commands read from the environment or from .tools/samlocal.env.
SETTINGS = ("DOCKER_HOST", "SAM_SKIP_PULL_IMAGE", "SHOPFEED_SAMLOCAL_ARCHITECTURE", env.HOST_VARIABLE)
_ARCHITECTURES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}


def settings(environ: Mapping[str, str] = os.environ, path: Path = SETTINGS_FILE) -> dict[str, str]:
    """``export NAME=value`` lines of .tools/samlocal.env, each overridden by the environment."""
    values: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            words = shlex.split(line, comments=True)
            if len(words) == 2 and words[0] == "export" and "=" in words[1]:
                name, _, value = words[1].partition("=")
                values[name] = value
    given = {name: environ[name] for name in {*values, *SETTINGS} if name in environ}
    return values | given


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


@dataclass(frozen=True)
class DockerApi:
    """The few Docker Engine API calls the tier needs (podman serves the same API)."""

    host: str  # DOCKER_HOST: unix:///path or tcp://host:port
    timeout: float = 10.0

    def _connection(self) -> http.client.HTTPConnection:
        url = urlsplit(self.host)
        if url.scheme == "unix":
            return _UnixConnection(url.path, self.timeout)
        return http.client.HTTPConnection(url.hostname or "localhost", url.port or 2375, timeout=self.timeout)

    def request(self, method: str, path: str) -> Any:
        connection = self._connection()
        try:
            connection.request(method, path)
            response = connection.getresponse()
            body = response.read()
        finally:
            connection.close()
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status} {body[:200]!r}")
        return json.loads(body) if body.strip().startswith((b"{", b"[")) else body.decode()

    def answers(self) -> bool:
        try:
            return bool(self.request("GET", "/_ping") == "OK")
        except (OSError, RuntimeError, http.client.HTTPException):
            return False

    def lambda_containers(self) -> set[str]:
        """Ids of the containers SAM runs functions in (it labels them)."""
        filters = quote(json.dumps({"label": ["sam.cli.container.type=lambda"]}))
        return {c["Id"] for c in self.request("GET", f"/containers/json?all=true&filters={filters}")}

    def container_environment(self, container_id: str) -> list[str]:
        """``NAME=value`` of every variable the container was started with."""
        return list(self.request("GET", f"/containers/{container_id}/json")["Config"]["Env"] or [])

    def remove_container(self, container_id: str) -> None:
        self.request("DELETE", f"/containers/{container_id}?force=true")

    def lambda_images(self) -> set[str]:
        """Ids of the images SAM builds on the Lambda base image (its emulator and the layers)."""
        filters = quote(json.dumps({"reference": ["samcli/lambda-python"]}))
        return {image["Id"] for image in self.request("GET", f"/images/json?filters={filters}")}

    def remove_image(self, image_id: str) -> None:
        self.request("DELETE", f"/images/{image_id}")

    def prune_dangling_images(self) -> None:
        self.request("POST", "/images/prune?filters=" + quote(json.dumps({"dangling": ["true"]})))


def architecture(config: Mapping[str, str]) -> str:
    """Build and run for this machine unless told otherwise (the deployed template says arm64)."""
    machine = config.get("SHOPFEED_SAMLOCAL_ARCHITECTURE") or platform.machine().lower()
    if machine not in _ARCHITECTURES:
        raise SystemExit(f"samlocal: no Lambda architecture for machine {machine!r}")
    return _ARCHITECTURES[machine]


def _python313_dir() -> str | None:
    # sam build checks that a python3.13 is on PATH for the python3.13 runtime (pyenv keeps it off).
    candidates = sorted(Path.home().glob(".pyenv/versions/3.13*/bin/python3.13"))
    return str(candidates[-1].parent) if candidates else None


@dataclass(frozen=True)
class SamLocal:
    """Build, invoke and serve the derived template with one set of settings."""

    config: Mapping[str, str]
    work: Path = WORK

    @property
    def docker(self) -> DockerApi:
        return DockerApi(self.config.get("DOCKER_HOST") or DEFAULT_DOCKER_HOST)

    @property
    def host(self) -> str:
        """The name Lambda containers reach this machine by."""
        return env.container_host(self.config.get(env.HOST_VARIABLE))

    @property
    def built_template(self) -> Path:
        return self.work / "build" / "template.yaml"

    @property
    def run_template(self) -> Path:
        """The built template with its layers taken from SAM's layer cache (``local.samlocal.layers``)."""
        return self.work / "build" / "run-template.json"

    @property
    def layer_cache(self) -> Path:
        return self.work / "layers"

    def environment(self) -> dict[str, str]:
        values = dict(os.environ) | dict(self.config) | {"SAM_CLI_TELEMETRY": "0"}
        values.setdefault("DOCKER_HOST", DEFAULT_DOCKER_HOST)
        python_dir = _python313_dir()
        if python_dir:
            values["PATH"] = python_dir + os.pathsep + values.get("PATH", "")
        return values

    def _sam(self, *args: str) -> list[str]:
        if not SAM.exists():
            raise SystemExit(f"samlocal: {SAM} is missing; run `make deps`")
        return [str(SAM), *args]

    def build(self) -> Path:
        """``sam build`` of the derived template for this machine; returns the template to run."""
        derived = template.write(self.work / "template.json", architecture(self.config))
        command = self._sam(
            "build",
            *("--template-file", str(derived), "--base-dir", str(ROOT)),
            *("--build-dir", str(self.work / "build"), "--cache-dir", str(self.work / "cache")),
            "--cached",
        )
        subprocess.run(command, cwd=ROOT, env=self.environment(), check=True, stdout=sys.stderr)
        return layers.pin(self.built_template, self.layer_cache, self.run_template)

    def write_env_vars(
        self, dynamodb_endpoint: str, tables: Mapping[str, str] | None = None, path: Path | None = None
    ) -> Path:
        """The ``--env-vars`` file for functions that use ``dynamodb_endpoint`` (as this machine reaches it)."""
        values = env.variables(dynamodb_endpoint, host=self.host, tables=tables)
        path = path or self.work / "env.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(env.env_vars_file(values), indent=2) + "\n")
        return path

    def _runtime_options(self, env_vars: Path) -> list[str]:
        options = ["--template-file", str(self.run_template), "--env-vars", str(env_vars)]
        options += ["--layer-cache-basedir", str(self.layer_cache)]
        if self.host == env.DEFAULT_HOST:
            # Docker on Linux knows host.docker.internal only when told; Docker Desktop ignores this.
            options += ["--add-host", f"{env.DEFAULT_HOST}:host-gateway"]
        return options

    def invoke_command(self, function: str, event: Path, env_vars: Path) -> list[str]:
        return self._sam("local", "invoke", function, "--event", str(event), *self._runtime_options(env_vars))

    def start_api_command(self, port: int, env_vars: Path) -> list[str]:
        # LAZY: one container per function, kept warm; without it every request starts a container.
        return self._sam(
            "local",
            "start-api",
            *("--port", str(port), "--warm-containers", "LAZY"),
            *self._runtime_options(env_vars),
        )


def stack_dynamodb_endpoint(stack_url: str) -> str | None:
    """The DynamoDB endpoint the running local stack (`make dev`) reports, if one answers."""
    try:
        with urllib.request.urlopen(f"{stack_url}/__local/stack", timeout=2) as page:
            return str(json.load(page)["endpoints"]["dynamodb"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m local.samlocal", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("command", choices=["build", "invoke", "start-api"])
    parser.add_argument("function", nargs="?", default="CommerceApiFunction", help="invoke: logical id")
    parser.add_argument("-e", "--event", type=Path, help="invoke: event file (events/...)")
    parser.add_argument("--port", type=int, default=3001, help="start-api: port (the local stack has 3000)")
    parser.add_argument(
        "--dynamodb-endpoint",
        default=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"),
        help="DynamoDB as this machine reaches it (default: $AWS_ENDPOINT_URL_DYNAMODB, else the stack's)",
    )
    parser.add_argument(
        "--stack",
        default=f"http://127.0.0.1:{os.environ.get('PORT', '3000')}",
        help="the running local stack to ask for its DynamoDB endpoint (default: %(default)s)",
    )
    args, sam_args = parser.parse_known_args(argv)
    if args.command == "invoke" and args.event is None:
        parser.error("invoke needs --event")
    sam = SamLocal(settings())
    if not sam.docker.answers():
        raise SystemExit(
            f"samlocal: no container runtime answers at DOCKER_HOST={sam.docker.host}; "
            "start Docker, or run local/samlocal/setup.sh (podman)"
        )
    sam.build()
    if args.command == "build":
        return
    endpoint = args.dynamodb_endpoint or stack_dynamodb_endpoint(args.stack)
    if endpoint is None:
        raise SystemExit(
            f"samlocal: no DynamoDB: start the local stack (`make dev`; none answers at {args.stack}) "
            "or pass --dynamodb-endpoint"
        )
    env_vars = sam.write_env_vars(endpoint)
    if args.command == "invoke":
        command = sam.invoke_command(args.function, args.event, env_vars)
    else:
        command = sam.start_api_command(args.port, env_vars)
    print("samlocal:", shlex.join([*command, *sam_args]), file=sys.stderr)
    os.execve(command[0], [*command, *sam_args], sam.environment())
