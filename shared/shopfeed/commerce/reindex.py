"""Rebuild the products index from CommerceTable: ``make reindex`` locally, or an operator in AWS::

    python -m shopfeed.commerce.reindex --table shopfeed-dev-CommerceTable-XXXX \\
        --search-endpoint https://search-....es.amazonaws.com --rate 200

An admin job: it reads the table with a paged Scan (no hot path may), at a bounded rate, and signs
its search requests with the operator's credentials (docs/operations.md, "Rebuild a search index").
"""

import argparse
import json
import os
import sys
import urllib.request
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from shopfeed.commerce import items
from shopfeed.commerce.search import PRODUCT_PROJECTION
from shopfeed.platform import clients, dynamo
from shopfeed.platform.clock import utc_now
from shopfeed.platform.opensearch import connect
from shopfeed.platform.search import SearchIndex
from shopfeed.platform.search_rebuild import Pace, Pages, RebuildReport, rebuild

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def product_pages(client: "DynamoDBClient", table: str, page_size: int) -> Pages:
    """Every product item of the table, a Scan page at a time (the filter runs after the read, so a
    page holds up to ``page_size`` items of any type, of which the products are kept)."""

    def pages() -> Iterator[Sequence[dynamo.Item]]:
        request: dict[str, Any] = {
            "TableName": table,
            "Limit": page_size,
            "FilterExpression": "entity_type = :product",
            "ExpressionAttributeValues": {":product": {"S": items.PRODUCT}},
        }
        while True:
            answer = client.scan(**request)
            yield [dynamo.deserialize(item) for item in answer.get("Items", [])]
            if "LastEvaluatedKey" not in answer:
                return
            request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]

    return pages


def reindex_products(
    client: "DynamoDBClient",
    table: str,
    index: SearchIndex,
    rate: float,
    page_size: int = 100,
    pace: Pace | None = None,
) -> RebuildReport:
    stamp = utc_now().strftime("%Y%m%d%H%M%S")
    return rebuild(PRODUCT_PROJECTION, index, product_pages(client, table, page_size), pace or Pace(rate), stamp)


def _local_stack(url: str) -> tuple[str, str]:
    """Point this process at a running `make dev` stack; its table name and search endpoint."""
    with urllib.request.urlopen(f"{url}/__local/stack", timeout=5) as answer:
        stack = json.load(answer)
    os.environ.update(stack["environment"])
    # The stack's fixed dummy credentials (local/engines.py): DynamoDB Local keys its data by them.
    os.environ.update({"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_REGION": "us-east-1"})
    os.environ.pop("AWS_SESSION_TOKEN", None)
    if not stack["endpoints"].get("search"):
        raise SystemExit("the local stack runs without a search engine (started with --no-search?)")
    return str(stack["resources"]["CommerceTable"]["name"]), str(stack["endpoints"]["search"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", help="a running local stack (http://127.0.0.1:3000): its table and engine")
    parser.add_argument("--table", default=os.environ.get("COMMERCE_TABLE_NAME"), help="CommerceTable's name")
    parser.add_argument("--search-endpoint", default=os.environ.get("SEARCH_ENDPOINT"))
    parser.add_argument(
        "--signing-service", default=os.environ.get("SEARCH_SIGNING_SERVICE", "es"), choices=["es", "aoss"]
    )
    parser.add_argument("--rate", type=float, default=200, help="products per second at most (default 200)")
    parser.add_argument("--page-size", type=int, default=100, help="items per Scan call (default 100)")
    args = parser.parse_args(argv)
    table, endpoint = _local_stack(args.stack) if args.stack else (args.table, args.search_endpoint)
    if not table or not endpoint:
        parser.error("give --table and --search-endpoint (or --stack)")
    report = reindex_products(
        clients.dynamodb(), table, connect(endpoint, args.signing_service, timeout=60), args.rate, args.page_size
    )
    print(
        f"products: {report.indexed} indexed into {report.index}, {report.caught_up} caught up, "
        f"alias moved from {report.dropped or 'nothing'}; {len(report.failures)} failed"
    )
    for doc_id, reason in sorted(report.failures.items()):
        print(f"  {doc_id}: {reason}", file=sys.stderr)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
