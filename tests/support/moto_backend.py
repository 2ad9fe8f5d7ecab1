"""One moto DynamoDB per xdist worker, shared by the integration tests (tests/integration/conftest.py).

Creating the template's tables (indexes, stream, TTL) cost ~90 ms a test against ~8 ms for the mock
itself, and most tests answer before they touch a table. So the tables are created once per worker and
emptied after each test, and everything else moto holds (queues, buses, buckets, secrets) is forgotten
as a fresh ``mock_aws()`` would. Stream readers start from TRIM_HORIZON, so each table also gets a new
stream shard: no record of the previous test reaches the next.
"""

from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.base_backend import BackendDict
from moto.dynamodb.models import dynamodb_backends

REGION = "us-east-1"


def forget_all_but_dynamodb() -> None:
    """What ``mock_aws()`` resets on start, except DynamoDB's tables (moto has no public call for it)."""
    for backend in list(BackendDict._instances):  # type: ignore[misc]
        if backend is dynamodb_backends:
            continue
        for account in backend.values():
            account.reset()
        backend.clear()
        BackendDict._instances.remove(backend)  # type: ignore[misc]


def empty_tables() -> None:
    """Empty every table and give each a new stream shard, as the moto model holds them.

    Deleting the items through the API (a Scan, then BatchWriteItem) cost ~15 ms a test; clearing the
    model costs nothing whatever a test wrote. moto refuses to enable a stream twice (real DynamoDB would
    make a new one), so the shard is replaced on the model too: the stream ARN changes, as a re-enabled
    stream's would, and a reader from TRIM_HORIZON sees only what the next test writes.
    """
    for table in dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].tables.values():
        table.items.clear()
        if table.stream_specification and table.stream_specification.get("StreamEnabled"):
            table.set_stream_specification(table.stream_specification)
