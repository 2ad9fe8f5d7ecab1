"""The ``make reindex`` command of one index: a paged Scan of its table into a rebuilt index.

Each context's ``reindex`` module names what it rebuilds (``python -m shopfeed.<context>.reindex``)
and hands its projection and table here; the rebuild itself is ``platform.search.rebuild``. An admin
job: it reads with a paged Scan (no hot path may), at a bounded rate, and signs its search requests
with the operator's credentials (docs/operations.md, "Rebuild a search index").
"""

import argparse
import json
import os
import sys
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import utc_now
from shopfeed.platform.search import SearchIndex
from shopfeed.platform.search.projection import Projection
from shopfeed.platform.search.rebuild import Pace, Pages, RebuildReport, rebuild
from shopfeed.platform.streams import ENTITY_TYPE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class Source:
    """Where an index's documents come from: the items of ``entity_type`` in a table that the
    template calls ``table_resource`` and gives functions as ``table_variable``."""

    projection: Projection
    entity_type: str
    table_resource: str
    table_variable: str


def scan_pages(client: "DynamoDBClient", table: str, entity_type: str, page_size: int) -> Pages:
    """Every item of ``entity_type`` in the table, a Scan page at a time (the filter runs after the
    read, so a page holds up to ``page_size`` items of any type, of which those are kept)."""

    def pages() -> Iterator[Sequence[dynamo.Item]]:
        request: dict[str, Any] = {
            "TableName": table,
            "Limit": page_size,
            "FilterExpression": f"{ENTITY_TYPE} = :type",
            "ExpressionAttributeValues": {":type": {"S": entity_type}},
        }
        while True:
            answer = client.scan(**request)
            yield [dynamo.deserialize(item) for item in answer.get("Items", [])]
            if "LastEvaluatedKey" not in answer:
                return
            request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]

    return pages


def reindex(
    source: Source,
    client: "DynamoDBClient",
    table: str,
    index: SearchIndex,
    rate: float,
    page_size: int = 100,
    pace: Pace | None = None,
) -> RebuildReport:
    stamp = utc_now().strftime("%Y%m%d%H%M%S")
    pages = scan_pages(client, table, source.entity_type, page_size)
    return rebuild(source.projection, index, pages, pace or Pace(rate), stamp)


def _local_stack(url: str, table_resource: str) -> tuple[str, str]:
    """Point this process at a running `make dev` stack; the table's name and the search endpoint."""
    with urllib.request.urlopen(f"{url}/__local/stack", timeout=5) as answer:
        stack = json.load(answer)
    os.environ.update(stack["environment"])
    # The stack's fixed dummy credentials (local/engines.py): DynamoDB Local keys its data by them.
    # botocore reads its region from AWS_DEFAULT_REGION (AWS_REGION is what Lambda sets): both, so an
    # operator's shell without either still works.
    region = {"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"}
    os.environ.update({"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", **region})
    os.environ.pop("AWS_SESSION_TOKEN", None)
    if not stack["endpoints"].get("search"):
        raise SystemExit("the local stack runs without a search engine (started with --no-search?)")
    return str(stack["resources"][table_resource]["name"]), str(stack["endpoints"]["search"])


def main(source: Source, description: str, argv: Sequence[str] | None = None) -> int:
    """The command line of one index's rebuild; its exit status (1 if any document failed)."""
    alias = source.projection.spec.alias
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--stack", help="a running local stack (http://127.0.0.1:3000): its table and engine")
    parser.add_argument(
        "--table", default=os.environ.get(source.table_variable), help=f"{source.table_resource}'s name"
    )
    parser.add_argument("--search-endpoint", default=os.environ.get("SEARCH_ENDPOINT"))
    parser.add_argument(
        "--signing-service", default=os.environ.get("SEARCH_SIGNING_SERVICE", "es"), choices=["es", "aoss"]
    )
    parser.add_argument("--rate", type=float, default=200, help=f"{alias} per second at most (default 200)")
    parser.add_argument("--page-size", type=int, default=100, help="items per Scan call (default 100)")
    args = parser.parse_args(argv)
    table, endpoint = (
        _local_stack(args.stack, source.table_resource) if args.stack else (args.table, args.search_endpoint)
    )
    if not table or not endpoint:
        parser.error("give --table and --search-endpoint (or --stack)")
    from shopfeed.platform.search.opensearch import connect

    index = connect(endpoint, args.signing_service, timeout=60)
    report = reindex(source, clients.dynamodb(), table, index, args.rate, args.page_size)
    print(
        f"{alias}: {report.indexed} indexed into {report.index}, {report.caught_up} caught up, "
        f"alias moved from {report.dropped or 'nothing'}; {len(report.failures)} failed"
    )
    for doc_id, reason in sorted(report.failures.items()):
        print(f"  {doc_id}: {reason}", file=sys.stderr)
    return 1 if report.failures else 0
