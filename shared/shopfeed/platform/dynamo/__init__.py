"""The table gateway every repository is built on: item (de)serialisation, the few operations a
single-table repository needs, and TransactWriteItems whose cancellation reasons come back by label.

Repositories keep the meaning (key formats from their ``keys.py``, domain errors); this package keeps
the mechanics (expressions, placeholders, retries of contended transactions)::

    table = dynamo.Table(clients.dynamodb(), table_name)
    transaction = dynamo.Transaction()
    transaction.add("post", table.put_op(post_item, if_absent=True))
    transaction.add("counter:U1", table.update_op(key, dynamo.Update(add={"posts": 1}), condition=...))
    try:
        table.transact(transaction, busy="posts of U1")
    except dynamo.TransactionCancelled as cancelled:
        if cancelled.failed("counter:U1"): ...

Conditions are boto3's own ``Attr`` / ``Key`` builders, rendered for the low-level client here.
"""

from shopfeed.platform.dynamo.expiry import TTL_ATTRIBUTE, expired, now_epoch
from shopfeed.platform.dynamo.expressions import Update
from shopfeed.platform.dynamo.indexes import BASE_TABLE, ENTITY_TYPE, PARTITION, SORT, IndexSpec, indexed, reindexed
from shopfeed.platform.dynamo.serialization import Item, deserialize, serialize, value
from shopfeed.platform.dynamo.table import ConditionFailed, Table, TableBusy
from shopfeed.platform.dynamo.transactions import (
    MAX_TRANSACTION_ITEMS,
    RETRYABLE_REASONS,
    TRANSACTION_ATTEMPTS,
    Reason,
    Transaction,
    TransactionCancelled,
    TransactionContended,
    transact_once,
    transact_write,
)

__all__ = [
    "BASE_TABLE",
    "ENTITY_TYPE",
    "MAX_TRANSACTION_ITEMS",
    "PARTITION",
    "RETRYABLE_REASONS",
    "SORT",
    "TRANSACTION_ATTEMPTS",
    "TTL_ATTRIBUTE",
    "ConditionFailed",
    "IndexSpec",
    "Item",
    "Reason",
    "Table",
    "TableBusy",
    "Transaction",
    "TransactionCancelled",
    "TransactionContended",
    "Update",
    "deserialize",
    "expired",
    "indexed",
    "now_epoch",
    "reindexed",
    "serialize",
    "transact_once",
    "transact_write",
    "value",
]
