"""The environment `sam local` gives the functions: local endpoints instead of AWS.

SAM only overrides variables a function declares, so the derived template (``local.samlocal.template``)
declares every name written here. Endpoints must be reachable from inside the Lambda container, where
127.0.0.1 is the container itself, so a loopback endpoint is rewritten to the name containers reach
this machine by: podman adds ``host.containers.internal`` to every container (setup.sh says so in
.tools/samlocal.env); Docker Desktop has ``host.docker.internal``, and Docker on Linux gets it from
``--add-host host.docker.internal:host-gateway``. The engine must therefore listen on more than the
loopback interface (DynamoDB Local listens on all of them).
"""

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from local import cfn
from local.engines import CALL_TIMEOUT_SCALE

# Twice the local engines' scale: a container's calls cross the container network, and sam local runs
# beside the rest of `make test` on two cores, where a connect once outlasted the engines' scale.
CONTAINER_CALL_TIMEOUT_SCALE = str(2 * int(CALL_TIMEOUT_SCALE))
DEFAULT_HOST = "host.docker.internal"
HOST_VARIABLE = "SHOPFEED_SAMLOCAL_HOST"
_LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


def container_host(configured: str | None = None) -> str:
    """The name containers reach this machine by."""
    return configured or DEFAULT_HOST


def reachable_from_containers(endpoint: str, host: str | None = None) -> str:
    """``endpoint`` as a container sees it: loopback addresses become the host's name."""
    url = urlsplit(endpoint)
    if url.hostname not in _LOOPBACK:
        return endpoint
    netloc = container_host(host) + (f":{url.port}" if url.port else "")
    return urlunsplit(url._replace(netloc=netloc))


def variables(
    dynamodb_endpoint: str, host: str | None = None, tables: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment of every function under sam local: local endpoint, tables, secrets, fake credentials."""
    return {
        "AWS_ENDPOINT_URL_DYNAMODB": reachable_from_containers(dynamodb_endpoint, host),
        # Local resources are named after their logical ids (see local.cfn).
        **(tables or cfn.table_variables()),
        # In AWS the cursor key lives in Secrets Manager; locally it is given directly, and the ARN is
        # blanked so nothing in the container reaches for Secrets Manager.
        "CURSOR_SECRET": "samlocal-cursor-secret",
        "CURSOR_SECRET_ARN": "",
        # Fixed fake credentials, so a developer's real ones never reach a local container.
        "AWS_ACCESS_KEY_ID": "samlocal",
        "AWS_SECRET_ACCESS_KEY": "samlocal",
        "AWS_SESSION_TOKEN": "samlocal",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        # Containers reach DynamoDB Local through the container network: slower than AWS's milliseconds.
        "CALL_TIMEOUT_SCALE": CONTAINER_CALL_TIMEOUT_SCALE,
    }


def names() -> list[str]:
    """Every variable ``variables`` sets (the derived template declares them)."""
    return list(variables("http://127.0.0.1"))


def env_vars_file(values: Mapping[str, str]) -> dict[str, Any]:
    """The ``--env-vars`` document: the same values for every function of the template."""
    return {"Parameters": dict(values)}
