"""CommerceTable as the order archive sees it (ECOM-011): every DynamoDB call of the archive job.

Old orders come from the OrdersByAge index, one Query per write shard merged oldest first; an order
is read with one strong Query of its partition; batch manifests and the run's lease live in the
``ARCHIVE`` partition; an order leaves the table header first (a DeleteItem conditioned on the
version that was archived), then the rest of its partition (BatchWriteItem).
"""

import contextlib
import heapq
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from boto3.dynamodb.conditions import Attr

from shopfeed.commerce import items, keys
from shopfeed.commerce.models import ArchiveBatch, BatchState
from shopfeed.platform import batch_writes, dynamo
from shopfeed.platform.dynamo import BASE_TABLE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import WriteRequestTypeDef

# One index page per shard and Query: a page of KEYS_ONLY entries is ~150 bytes an order.
INDEX_PAGE: Final = 100


@dataclass(frozen=True)
class Candidate:
    """An order the age index lists as placed before the cutoff (the index is eventually consistent:
    the order may already be gone)."""

    placed_at: str
    order_id: str

    @property
    def month(self) -> str:
        return self.placed_at[:7]


class HeaderDelete(StrEnum):
    DELETED = "deleted"
    GONE = "gone"  # no header: an earlier attempt of the batch deleted it
    CHANGED = "changed"  # its version moved since it was archived: it stays


class BatchMoved(Exception):
    """A manifest was not in the state this run expected: another run is working on it."""

    def __init__(self, batch_id: str) -> None:
        super().__init__(f"archive batch {batch_id} changed state under this run")
        self.batch_id = batch_id


class ArchiveRepository:
    def __init__(self, table: dynamo.Table) -> None:
        self._table = table

    # -- the run's lease ---------------------------------------------------------------------------

    def acquire_lease(self, run_id: str, now: str, held_until: str) -> bool:
        """Hold the job until ``held_until`` unless another run holds it now (ISO-8601 UTC times)."""
        free = Attr(dynamo.PARTITION).not_exists() | Attr("held_until").lt(now)
        return self._table.put_if(items.archive_lease_item(run_id, held_until), free)

    def release_lease(self, run_id: str) -> None:
        """Give the job back, unless the lease already passed to another run."""
        with contextlib.suppress(dynamo.ConditionFailed):
            self._table.delete(keys.archive_lease(), Attr("run_id").eq(run_id))

    # -- manifests ---------------------------------------------------------------------------------

    def unfinished_batches(self) -> list[ArchiveBatch]:
        """Every manifest an earlier run left, oldest first (batch ids are ULIDs)."""
        found: list[ArchiveBatch] = []
        start: Mapping[str, Any] | None = None
        while True:
            response = self._table.query(
                BASE_TABLE,
                keys.ARCHIVE,
                where=lambda sk: sk.begins_with(keys.ARCHIVE_BATCH),
                start=start,
                consistent=True,
            )
            found += [items.archive_batch_from(dynamo.deserialize(raw)) for raw in response["Items"]]
            start = response.get("LastEvaluatedKey")
            if not start:
                return found

    def record(self, batch: ArchiveBatch) -> None:
        if not self._table.create(items.archive_batch_item(batch)):
            raise BatchMoved(batch.batch_id)

    def mark_written(self, batch: ArchiveBatch, order_ids: Sequence[str], md5: str, now: str) -> ArchiveBatch:
        """The batch's object holds exactly ``order_ids`` and was confirmed with ``md5``."""
        return self._move(batch, BatchState.RECORDED, BatchState.WRITTEN, order_ids, now, md5)

    def narrow(self, batch: ArchiveBatch, order_ids: Sequence[str], md5: str, now: str) -> ArchiveBatch:
        """The batch keeps only ``order_ids``: its object is to be written again as ``md5``."""
        return self._move(batch, BatchState.WRITTEN, BatchState.WRITTEN, order_ids, now, md5=md5)

    def _move(
        self,
        batch: ArchiveBatch,
        expected: BatchState,
        state: BatchState,
        order_ids: Sequence[str],
        now: str,
        md5: str,
    ) -> ArchiveBatch:
        change = dynamo.Update(set={"state": state.value, "order_ids": list(order_ids), "updated_at": now, "md5": md5})
        # Conditioned on what this run read: a manifest moved by anyone else is not overwritten.
        unchanged = Attr("state").eq(expected.value) & Attr("updated_at").eq(batch.updated_at)
        try:
            item = self._table.update(keys.archive_batch(batch.batch_id), change, unchanged)
        except dynamo.ConditionFailed as failed:
            raise BatchMoved(batch.batch_id) from failed
        return items.archive_batch_from(item)

    def forget(self, batch: ArchiveBatch) -> None:
        self._table.delete(keys.archive_batch(batch.batch_id))

    # -- orders ------------------------------------------------------------------------------------

    def old_orders(self, placed_before: str) -> Iterator[Candidate]:
        """Every order the age index lists as placed before ``placed_before``, oldest first: the
        shards' Queries (``INDEX_PAGE`` entries each) merged, each paged only when the merge needs it."""
        bound = keys.placed_before(placed_before)
        shards = [self._shard(keys.age_partition(shard), bound) for shard in range(keys.ORDER_AGE_SHARDS)]
        return heapq.merge(*shards, key=lambda candidate: (candidate.placed_at, candidate.order_id))

    def _shard(self, partition: str, bound: str) -> Iterator[Candidate]:
        index = keys.ORDERS_BY_AGE
        start: Mapping[str, Any] | None = None
        while True:
            response = self._table.query(index, partition, where=lambda sk: sk.lt(bound), limit=INDEX_PAGE, start=start)
            for raw in response["Items"]:
                placed_at, order_id = keys.placement_of(raw[index.sort_key]["S"])
                yield Candidate(placed_at, order_id)
            start = response.get("LastEvaluatedKey")
            if not start:
                return

    def read_orders(self, order_ids: Sequence[str]) -> dict[str, list[dynamo.Item]]:
        """Every item of each order's partition (strong: one Query per order), in key order; an order
        without a header is left out (it was archived already, or is no order)."""
        found: dict[str, list[dynamo.Item]] = {}
        for order_id in order_ids:
            partition: list[dynamo.Item] = []
            start: Mapping[str, Any] | None = None
            while True:
                response = self._table.query(BASE_TABLE, keys.order_partition(order_id), start=start, consistent=True)
                partition += [dynamo.deserialize(raw) for raw in response["Items"]]
                start = response.get("LastEvaluatedKey")
                if not start:
                    break
            if any(item[dynamo.SORT] == keys.META for item in partition):
                found[order_id] = partition
        return found

    def delete_header(self, order_id: str, version: int) -> HeaderDelete:
        """Delete an order's header if it still has the ``version`` that was archived and no payment
        started since (starting one flags the order without moving its version), nor a refund."""
        unchanged = (
            Attr("version").eq(version)
            & Attr(items.PAYMENT_PENDING).not_exists()
            & Attr(items.REFUND_PENDING).not_exists()
        )
        try:
            self._table.delete(keys.order(order_id), unchanged)
        except dynamo.ConditionFailed as failed:
            return HeaderDelete.GONE if failed.current is None else HeaderDelete.CHANGED
        return HeaderDelete.DELETED

    def put_back(self, partition: Sequence[dynamo.Item]) -> int:
        """Write an archived order's items again, each only if absent; how many were written."""
        # JSON carried non-integral numbers as floats, which DynamoDB's serializer refuses: as Decimal.
        exact = [json.loads(json.dumps(item), parse_float=Decimal) for item in partition]
        return sum(1 for item in exact if self._table.put_if_absent(item))

    def delete_items(self, item_keys: Sequence[Mapping[str, str]]) -> int:
        """Delete every item (BatchWriteItem, 25 a call, every unprocessed one retried); the calls made."""
        requests: list[WriteRequestTypeDef] = [{"DeleteRequest": {"Key": dynamo.serialize(key)}} for key in item_keys]
        return batch_writes.write_all(self._table.client, self._table.name, requests)
