"""What the samlocal tests share: tables with their env-vars file, invoking, a bearer token."""

import base64
import json
import subprocess
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from local import dynamodb_local
from local.cfn import ROOT
from local.harness.tables import create_tables
from local.samlocal.sam import SamLocal
from shopfeed.platform import dynamo

EVENTS = ROOT / "events"
INVOKE_TIMEOUT = 180  # a first invoke builds SAM's image with the layers (~10 s here)


@dataclass(frozen=True)
class Tables:
    """Template tables of one test in DynamoDB Local, and the ``--env-vars`` file naming them."""

    names: dict[str, str]
    env_vars: Path
    client: Any

    def item(self, key: Mapping[str, str], table: str = "CommerceTable") -> dict[str, Any] | None:
        response = self.client.get_item(TableName=self.names[table], Key=dynamo.serialize(key), ConsistentRead=True)
        return dynamo.deserialize(response["Item"]) if "Item" in response else None

    def entities(self, entity_type: str) -> list[dict[str, Any]]:
        """Every item of one type (a Scan: tests only)."""
        pages = self.client.get_paginator("scan").paginate(TableName=self.names["CommerceTable"], ConsistentRead=True)
        found = [dynamo.deserialize(item) for page in pages for item in page["Items"]]
        return [item for item in found if item.get("entity_type") == entity_type]


def new_tables(sam: SamLocal, engine: dynamodb_local.DynamoDBLocal, directory: Path) -> Tables:
    """Fresh template tables under a unique suffix, and an env-vars file in ``directory`` naming them."""
    client = boto3.client(
        "dynamodb",
        endpoint_url=engine.endpoint,
        region_name="us-east-1",
        aws_access_key_id="samlocal",
        aws_secret_access_key="samlocal",
    )
    names = create_tables(client, suffix=f"-{uuid.uuid4().hex[:12]}")
    tables = {"COMMERCE_TABLE_NAME": names["CommerceTable"], "FEED_TABLE_NAME": names["FeedTable"]}
    env_vars = sam.write_env_vars(engine.endpoint, tables=tables, path=directory / "env.json")
    return Tables(names, env_vars, client)


def invoke(sam: SamLocal, function: str, event: str, tables: Tables) -> dict[str, Any]:
    """``sam local invoke`` of ``function`` on ``events/<event>``; the function's result."""
    run = subprocess.run(
        sam.invoke_command(function, EVENTS / event, tables.env_vars),
        cwd=ROOT,
        env=sam.environment(),
        capture_output=True,
        text=True,
        timeout=INVOKE_TIMEOUT,
        check=False,
    )
    assert run.returncode == 0, f"sam local invoke failed:\n{run.stderr[-4000:]}"
    result: dict[str, Any] = json.loads(run.stdout)
    return result


@dataclass(frozen=True)
class LocalApi:
    url: str
    tables: Tables


def bearer(sub: str, *groups: str) -> dict[str, str]:
    """An Authorization header whose claims reach the function under start-api (nobody checks the
    signature there, see local/samlocal/authorizer_layer)."""

    def part(document: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(document).encode()).rstrip(b"=").decode()

    claims = {"sub": sub, "cognito:groups": list(groups), "exp": int(time.time()) + 600}
    return {"Authorization": f"Bearer {part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.unsigned"}
